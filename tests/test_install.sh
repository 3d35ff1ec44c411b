#!/usr/bin/env bash
# test_install.sh - relayout installed under a temporary prefix (cmake
# --install) serves two consumers built against it, one through pkg-config
# and one through find_package(relayout), each linked to the shared library
# and run; the prefix holds the headers, both libraries, the command, the
# pkg-config file and the CMake package, and the command runs from it.
# usage: test_install.sh SOURCE_DIR BUILD_DIR
set -u
src=$1 build=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAILED: $*" >&2; }
run() { local d=$1; shift; if "$@" >"$T/out" 2>&1; then ok; else bad "$d: $(cat "$T/out")"; fi; }

run "cmake --install" cmake --install "$build" --prefix "$T/prefix"
P=$T/prefix
for f in include/relayout.h include/relayout_cl.h include/relayout_npy.h bin/relayout \
  share/man/man1/relayout.1 share/bash-completion/completions/relayout; do
  [ -e "$P/$f" ] && ok || bad "$f not installed"
done
pc=$(find "$P" -name relayout.pc | head -1)
[ -n "$pc" ] && ok || bad "no relayout.pc"
lib=$(dirname "$(dirname "$pc")")
for f in librelayout.a librelayout.so relayoutConfig.cmake relayoutConfigVersion.cmake; do
  [ -n "$(find "$lib" -name "$f")" ] && ok || bad "$f not installed"
done
run "the installed command" "$P/bin/relayout" --version
grep -q "^relayout $(grep -E '^Version:' "$pc" | cut -d' ' -f2)\$" "$T/out" && ok ||
  bad "relayout --version and relayout.pc disagree: $(cat "$T/out")"

# pkg-config
export PKG_CONFIG_PATH=$(dirname "$pc")
flags=$(pkg-config --cflags --libs relayout) && ok || bad "pkg-config --libs relayout"
run "pkg-config consumer builds" cc -std=c11 -Wall -Werror -o "$T/pc" "$src/tests/consumer/consumer.c" $flags
run "pkg-config consumer runs" env LD_LIBRARY_PATH="$lib" "$T/pc"
grep -q "NCHW -> NHWC ok" "$T/out" && ok || bad "pkg-config consumer: $(cat "$T/out")"
ldd "$T/pc" | grep -q "librelayout.so.0" && ok || bad "pkg-config consumer is not linked to the shared library"

# find_package
run "CMake consumer configures" cmake -S "$src/tests/consumer" -B "$T/cm" -DCMAKE_PREFIX_PATH="$P"
run "CMake consumer builds" cmake --build "$T/cm"
run "CMake consumer runs" "$T/cm/consumer"
grep -q "NCHW -> NHWC ok" "$T/out" && ok || bad "CMake consumer: $(cat "$T/out")"
ldd "$T/cm/consumer" | grep -q "librelayout.so.0" && ok || bad "CMake consumer is not linked to the shared library"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
