#!/usr/bin/env bash
# test_conform.sh - relayout conform: a matrix passes with JUnit and JSON
# that count its cases; a bug planted in one case's padding (the test-only
# RELAYOUT_CONFORM_PLANT) fails that case alone, named, with "padding", and
# the command it prints reruns it; a case that cannot bind is a skip with
# its reason, never a pass; one device against another; usage errors.
# usage: test_conform.sh PATH/TO/relayout
. "$(dirname "$0")/checks.sh"
F=NCHW,NHWC,NC1HWC0,FRACTAL_Z,nChw16c

"$R" conform --device cpu --quick --formats $F --junit j.xml --json j.json >out.txt 2>&1 &&
  ok || bad "the quick matrix: $(cat out.txt)"
has "40 cases" "40 cases on" out.txt
has "JUnit counts them" 'tests="40" failures="0" skipped="0"' j.xml
[ "$(grep -c '<testcase' j.xml)" = 40 ] && ok || bad "40 testcases in j.xml"
[ "$(grep -c '"verdict": "pass"' j.json)" = 40 ] && ok || bad "40 passes in j.json"

RELAYOUT_CONFORM_PLANT=7 "$R" conform --device cpu --quick --formats $F --junit p.xml >out.txt 2>&1
[ $? = 1 ] && ok || bad "a planted bug: exit 1"
[ "$(grep -c '^FAIL ' out.txt)" = 1 ] && ok || bad "one case fails: $(cat out.txt)"
has "the element, as padding" "  padding  " out.txt
has "JUnit's failure" 'failures="1"' p.xml
rerun=$(sed -n 's/^  rerun: //p' out.txt)
case=$(printf '%s\n' "$rerun" | sed -n "s/.*--case '\(.*\)'/\1/p")
[ -n "$case" ] && ok || bad "the failure prints a rerun: $(cat out.txt)"
RELAYOUT_CONFORM_PLANT=1 "$R" conform --device cpu --seed 1 --case "$case" >out.txt 2>&1
[ $? = 1 ] && grep -q "^fail " out.txt && ok || bad "the rerun fails the same way: $(cat out.txt)"
"$R" conform --device cpu --seed 1 --case "$case" >out.txt 2>&1 &&
  grep -q "^pass " out.txt && ok || bad "unplanted, the case passes: $(cat out.txt)"

"$R" conform --device cpu --case 'NCHW->FRACTAL_NZ f16 2x3x4x5' --json s.json >out.txt 2>&1 &&
  ok || bad "a skip alone is no failure: $(cat out.txt)"
has "a skip, with why" "SKIP NCHW->FRACTAL_NZ f16 2x3x4x5: does not bind" out.txt
has "JSON's verdict" '"verdict": "skip"' s.json

"$R" conform --device cpu --against cpu --quick --formats NCHW,NHWC --dtypes f32 >out.txt 2>&1 &&
  has "device against device" "against cpu" out.txt || bad "against another engine: $(cat out.txt)"

"$R" conform --device cpu --quick --junit nodir/j.xml >out.txt 2>&1
[ $? = 1 ] && ! grep -q "cases on" out.txt && ok ||
  bad "a report path whose directory is missing is refused before the matrix: $(cat out.txt)"
has "it says why" "nodir" out.txt

for args in "--device cpu --quick --full" "--device cpu --case NCHW" "--device cpu --dtypes f8" "--quick"; do
  "$R" conform $args >out.txt 2>&1
  [ $? = 2 ] && ok || bad "conform $args: exit 2 ($(cat out.txt))"
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
