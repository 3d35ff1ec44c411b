# checks.sh - what the command's shell tests share, sourced with the
# command's path as $1: R (that path, absolute), a temporary directory T
# made the working directory and removed at exit, and checks that count
# into pass and fail.
set -u
R=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 2
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAILED: $*" >&2; }
# expect_ok DESC CMD...: the command succeeds
expect_ok() { local d=$1; shift; if "$@" >out.txt 2>err.txt; then ok; else bad "$d: $(cat err.txt)"; fi; }
# expect_fail DESC CODE TEXT CMD...: exits CODE and says TEXT on stderr
expect_fail() {
  local d=$1 code=$2 text=$3; shift 3
  "$@" >out.txt 2>err.txt; local rc=$?
  if [ "$rc" = "$code" ] && grep -qF -- "$text" err.txt; then ok
  else bad "$d: exit $rc, stderr: $(cat err.txt)"; fi
}
same() { if cmp -s "$2" "$3"; then ok; else bad "$1: $2 and $3 differ"; fi; }
absent() { if [ ! -e "$2" ] && ! ls "$2".tmp-* >/dev/null 2>&1; then ok; else bad "$1: $2 was left behind"; fi; }
has() { if grep -qF -- "$2" "$3"; then ok; else bad "$1: '$2' not in $(cat "$3")"; fi; }
