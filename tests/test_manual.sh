#!/usr/bin/env bash
# test_manual.sh - relayout(1) and the bash completion: the manual page the
# build made is what scripts/manpage.sh makes from the command's help texts
# now (no drift), renders with man without warnings and holds every
# command's usage; 'relayout help CMD' is 'relayout CMD --help'; the
# completion offers commands, each command's options, layout names (CATLASS's
# among them) and dtypes.
# usage: test_manual.sh PATH/TO/relayout BUILD_DIR
. "$(dirname "$0")/checks.sh"
here=$(cd "$(dirname "$0")/.." && pwd)
build=$2
bash "$here/scripts/manpage.sh" "$R" >now.1 && ok || bad "manpage.sh failed"
same "the built manual page is the help texts' as they are now" "$build/relayout.1" now.1
# (a minimized Ubuntu's man is a stub that renders nothing: said, not checked)
MANWIDTH=100 man -l now.1 >page.txt 2>man.err
rendered=1
if grep -q "This system has been minimized" page.txt; then
  rendered=0
  echo "man here is a minimized system's stub: the rendered page is not checked"
else
  [ ! -s man.err ] && ok || bad "man renders it without warnings: $(cat man.err)"
fi
for cmd in $("$R" --help | sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p'); do
  "$R" help "$cmd" >help.txt 2>&1
  "$R" "$cmd" --help >flag.txt 2>&1
  same "relayout help $cmd is relayout $cmd --help" help.txt flag.txt
  ((rendered)) && has "the manual has $cmd's usage" "$(head -1 help.txt)" page.txt
done
if ((rendered)); then
  has "the manual's exit status" "2  the command line was wrong" page.txt
  has "the manual's environment" "RELAYOUT_DEVICE" page.txt
fi
expect_fail "help of no command" 2 "unknown command 'nosuch'" "$R" help nosuch

. "$here/scripts/relayout-completion.bash"
complete_at() { COMP_WORDS=("$R" "$@"); COMP_CWORD=$#; _relayout; echo "${COMPREPLY[*]}"; }
[ "$(complete_at con)" = "convert conform" ] && ok || bad "commands: $(complete_at con)"
[ "$(complete_at convert --to-d)" = "--to-dtype" ] && ok || bad "options: $(complete_at convert --to-d)"
[ "$(complete_at convert --from FRACTAL_N)" = "FRACTAL_NZ" ] && ok || bad "formats: $(complete_at convert --from FRACTAL_N)"
[ "$(complete_at explain z)" = "zN zZ" ] && ok || bad "aliases: $(complete_at explain z)"
[ "$(complete_at help pre)" = "preprocess" ] && ok || bad "help's commands: $(complete_at help pre)"
[ "$(complete_at convert --dtype bf)" = "bf16" ] && ok || bad "dtypes: $(complete_at convert --dtype bf)"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
