#!/usr/bin/env bash
# manpage.sh RELAYOUT - writes relayout(1) to standard output, made from the
# command's own help texts ('relayout --help' and 'relayout help CMD' for
# each command it lists), so that the manual cannot drift from them. The
# build runs it into build/relayout.1; 'cmake --install' installs that.
set -euo pipefail
R=$1
# roff-safe: backslashes doubled as \e, a leading . or ' guarded
roff() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
version=$("$R" --version | sed 's/^relayout //')
main=$("$R" --help)
cat <<HEAD
.TH RELAYOUT 1 "" "relayout $version" "User Commands"
.SH NAME
relayout \\- convert tensors between memory layouts
.SH SYNOPSIS
.B relayout
.I COMMAND
.RI [ ARGS ]
.SH DESCRIPTION
.nf
HEAD
printf '%s\n' "$main" | sed -n '3,$p' | roff
printf '.fi\n.SH COMMANDS\n'
for cmd in $(printf '%s\n' "$main" | sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p'); do
  printf '.SS %s\n.nf\n' "$cmd"
  # a command this build left out (bench) says so, on standard error
  "$R" help "$cmd" 2>&1 | roff || true
  printf '.fi\n'
done
cat <<'TAIL'
.SH SEE ALSO
The layout contract, docs/LAYOUTS.md; casts, docs/CASTS.md; preprocessing,
docs/PREPROCESS.md; the library's API, relayout.h.
TAIL
