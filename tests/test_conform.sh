#!/usr/bin/env bash
# test_conform.sh - relayout conform: a matrix passes with JUnit and JSON
# that count its cases, casts among them; a bug planted in one case's
# padding (the test-only RELAYOUT_CONFORM_PLANT) fails that case alone,
# named, with "padding", and the command it prints reruns it; a case that
# cannot bind is a skip with its reason, never a pass; one device against
# another; a corpus exported (files as its manifest's sha256 says, the
# seeds' 20x28 FRACTAL_NZ as the seed prints it) and imported; a damaged
# corpus refused, naming the file, before anything runs; an expected
# output changed (and its checksum with it) fails its case; usage errors.
# --isolate: each case in a child gives the same verdicts, and a case that
# crashes its driver (tests/fault/clfault.c) fails alone, named, with its
# signal and rerun command, while the rest of the matrix completes.
# usage: test_conform.sh PATH/TO/relayout PATH/TO/libclfault.so
SHIM=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
. "$(dirname "$0")/checks.sh"
F=NCHW,NHWC,NC1HWC0,FRACTAL_Z,nChw16c

"$R" conform --device cpu --quick --formats $F --junit j.xml --json j.json >out.txt 2>&1 &&
  ok || bad "the quick matrix: $(cat out.txt)"
has "45 cases: 20 pairs in f16 and i8, and a cast on every fourth" "45 cases on" out.txt
has "the casts in the table" "f32->i8:0.05:-3" out.txt
has "JUnit counts them" 'tests="45" failures="0" skipped="0"' j.xml
[ "$(grep -c '<testcase' j.xml)" = 45 ] && ok || bad "45 testcases in j.xml"
[ "$(grep -c '"verdict": "pass"' j.json)" = 45 ] && ok || bad "45 passes in j.json"

# --device all and a list, on PoCL's two devices: the cases and verdicts of
# the one-device run, in its order; a planted failure names the device
# that ran it in its rerun line.
POCL_DEVICES="pthread pthread" "$R" conform --device all --quick --formats $F --json all.json >out.txt 2>&1 &&
  ok || bad "the quick matrix on both devices: $(cat out.txt)"
grep -qE "^45 cases on [^,]+(, [^,]+)+ against" out.txt && ok || bad "both devices named: $(cat out.txt)"
python3 - <<'PY' && ok || bad "--device all gives the one-device run's cases and verdicts"
import json
one, two = json.load(open("j.json")), json.load(open("all.json"))
key = lambda r: [(c["index"], c["case"], c["verdict"]) for c in r["cases"]]
assert key(one) == key(two) and len(two["cases"]) == two["matrix_cases"] == 45
PY
RELAYOUT_CONFORM_PLANT=7 POCL_DEVICES="pthread pthread" "$R" conform --device 0,1 --quick --formats $F >out.txt 2>&1
[ $? = 1 ] && [ "$(grep -c '^FAIL ' out.txt)" = 1 ] && ok || bad "a planted bug on two devices: $(cat out.txt)"
grep -qE "rerun: relayout conform --device [01] " out.txt && ok || bad "the rerun names one device: $(cat out.txt)"
expect_fail "--device all with --isolate" 2 "--isolate, --case and --import run on one" "$R" conform --device all --isolate --quick

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

expect_ok "a quantizing case" "$R" conform --device cpu --case 'NCHW->NC1HWC0 f32->i8:0.05:-3 2x17x3x3'
has "it passes" "pass NCHW->NC1HWC0 f32->i8:0.05:-3 2x17x3x3" out.txt

# The corpus: exported, checked file by file, imported.
expect_ok "export" "$R" conform --export corpus --quick --formats NCHW,NC1HWC0 --dtypes 'f16,f32->i8:0.05:-3'
has "it says how many" "cases written to corpus" out.txt
python3 - corpus <<'PY' && ok || bad "the corpus as its manifest says"
import hashlib, json, struct, sys
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
cases = m["cases"]
assert len(cases) == 25 + 2 + 1, len(cases)  # seeds, f16, a cast
for c in cases:
    for w in ("input", "expected"):
        data = open(d + "/" + c[w], "rb").read()
        assert hashlib.sha256(data).hexdigest() == c["sha256"][w], c[w]
seeds = [c for c in cases if c.get("origin")]
assert len(seeds) == 25
nz = seeds[0]
assert nz["from"] == "ND" and nz["to"].startswith("FRACTAL_NZ(")
assert nz["dims"] == [20, 28]
raw = open(d + "/" + nz["expected"], "rb").read()
start = 10 + struct.unpack("<H", raw[8:10])[0]
def at(n1, m1, m0, n0):
    e = ((n1 * 2 + m1) * 16 + m0) * 16 + n0
    return struct.unpack_from("<H", raw, start + 2 * e)[0]
# the seed's printed tensor at [n1][m1][m0][n0] (inputs hold their index)
for g in ((0, 0, 1, 0, 28), (0, 1, 0, 0, 448), (1, 0, 0, 2, 18),
          (1, 1, 2, 0, 520), (0, 1, 4, 0, 0)):
    assert at(*g[:4]) == g[4], g
assert any(c["to_quant"] for c in cases)
PY
expect_ok "import" "$R" conform --import corpus --device cpu --junit cj.xml
has "every case, against the corpus" "28 cases on" out.txt
has "the seeds' group" "seeds" out.txt
has "JUnit" 'tests="28" failures="0"' cj.xml
expect_fail "export into an existing directory" 1 "exists" "$R" conform --export corpus --quick
cp -r corpus damaged
printf '\001' | dd of=damaged/cases/00005-out.npy bs=1 seek=200 conv=notrunc 2>/dev/null
expect_fail "a damaged file" 1 "00005-out.npy: its sha256" "$R" conform --import damaged --device cpu
! grep -q "cases on" out.txt && ok || bad "nothing ran: $(cat out.txt)"
python3 - corpus <<'PY' && ok || bad "forging an expected output"
import hashlib, json, sys
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
c = m["cases"][15]
p = d + "/" + c["expected"]
b = bytearray(open(p, "rb").read())
b[-1] ^= 0xFF
open(p, "wb").write(b)
c["sha256"]["expected"] = hashlib.sha256(b).hexdigest()
json.dump(m, open(d + "/manifest.json", "w"))
PY
"$R" conform --import corpus --device cpu >out.txt 2>&1
[ $? = 1 ] && [ "$(grep -c '^FAIL ' out.txt)" = 1 ] && ok ||
  bad "an expected output changed: its case fails: $(cat out.txt)"
has "against the corpus" "differs from the corpus" out.txt

# Nothing passes vacuously: a misspelt format, no case at all, a corpus of
# none or whose case skips (unless --allow-skips) all fail.
expect_fail "a misspelt format" 2 "did you mean NC1HWC0?" "$R" conform --device ref --formats NCHW,NC1HWCO
expect_fail "a format outside the matrix" 2 "'NCHW16c' is not in the matrix" "$R" conform --device ref --formats NCHW16c
expect_fail "a matrix of no case" 1 "no case ran" "$R" conform --device ref --formats NCHW --dtypes f16
expect_fail "--junit and --json the same file" 2 "name the same file" "$R" conform --device ref --quick --junit r.x --json ./r.x
expect_ok "a small corpus" "$R" conform --export small --quick --formats NCHW,NHWC --dtypes f16
# corpus DIR edited by a python statement on manifest m (its case list c)
edit() {
  rm -rf "$1" && cp -r small "$1" && python3 - "$1" "$2" <<'PY'
import json, sys
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
c = m["cases"]
exec(sys.argv[2])
json.dump(m, open(d + "/manifest.json", "w"))
PY
}
edit none 'm["cases"] = []'
expect_fail "a corpus of no case" 1 "no case ran" "$R" conform --import none --device ref
edit skip 'c[-1]["to_dtype"] = "i16"'
expect_fail "a corpus case that skips" 1 "counted as failures" "$R" conform --import skip --device ref
expect_ok "... passes with --allow-skips" "$R" conform --import skip --device ref --allow-skips
edit v99 'm["version"] = 99'
expect_fail "a corpus of another version" 1 "not a corpus of version 1" "$R" conform --import v99 --device ref
edit zp 'c[-1]["to_dtype"] = "i8"; c[-1]["to_quant"] = {"scale": 0.5, "zero_point": 2**40}'
expect_fail "a zero point past int32" 1 "an int32 zero point" "$R" conform --import zp --device ref
! grep -q "cases on" out.txt && ok || bad "a damaged corpus runs nothing: $(cat out.txt)"
# Files are read beneath DIR, regular, named when missing.
rm -rf out1 out2 && cp -r small out1 && cp -r small out2
f=$(python3 -c 'import json; print(json.load(open("small/manifest.json"))["cases"][0]["input"])')
ln -sf /etc/passwd "out1/$f"
expect_fail "a file linked out of DIR" 1 "a link leads out of the directory" "$R" conform --import out1 --device ref
! grep -q "sha256" out.txt && ok || bad "nothing of the link's target is read: $(cat out.txt)"
mv out2/cases out2-cases && ln -s "$PWD/out2-cases" out2/cases
expect_fail "a cases/ linked out of DIR" 1 "a link leads out of the directory" "$R" conform --import out2 --device ref
rm -rf out1 && cp -r small out1 && rm "out1/$f" && mkfifo "out1/$f"
expect_fail "a FIFO in the corpus" 1 "not a regular file (a FIFO)" timeout 20 "$R" conform --import out1 --device ref
rm "out1/$f"
expect_fail "a missing file, named" 1 "$f" "$R" conform --import out1 --device ref
# An export stopped by a signal leaves no temp directory; a day-old one of a
# killed run is swept.
mkdir -p late.tmp-AAAAAA/cases && touch -d '2 days ago' late.tmp-AAAAAA
"$R" conform --export late --full >out.txt 2>&1 &
sleep 1 && kill -INT $! && wait $!
[ $? != 0 ] && ok || bad "an interrupted export fails"
absent "the interrupted export" late

# A fleet's share: three parts merged are the one run, case for case; a
# part missing, one twice, an interrupted one refused.
G="--device ref --formats NCHW,NHWC,NC1HWC0 --dtypes f16,i8"
expect_ok "the matrix in one run" "$R" conform $G --json whole.json
for i in 0 1 2; do
  expect_ok "part $i/3" "$R" conform $G --part $i/3 --json part$i.json
done
expect_ok "the parts merged" "$R" conform --merge part0.json part1.json part2.json --json merged.json --junit merged.xml
python3 - <<'PY' && ok || bad "the merged parts are the one run's cases and verdicts"
import json
w, m = json.load(open("whole.json")), json.load(open("merged.json"))
key = lambda r: [(c["index"], c["case"], c["verdict"]) for c in r["cases"]]
assert key(w) == key(m) and len(w["cases"]) == w["matrix_cases"] == 24
assert {len(json.load(open(f"part{i}.json"))["cases"]) for i in range(3)} == {8}
PY
has "JUnit of the merge" 'tests="24" failures="0"' merged.xml
expect_fail "a part missing" 1 "8 of the matrix's 24 cases are in no report" "$R" conform --merge part0.json part2.json
expect_fail "a part twice" 1 "parts overlap" "$R" conform --merge part0.json part0.json part1.json part2.json
expect_fail "a part of another matrix" 1 "another matrix" "$R" conform --merge part0.json s.json
expect_fail "--part out of range" 2 "--part 3/3: I/N" "$R" conform $G --part 3/3
# Stopped by a signal, the matrix leaves its reports of the cases done.
"$R" conform --device ref --full --json int.json --junit int.xml >out.txt 2>err.txt &
sleep 2 && kill -INT $! && wait $!
[ $? != 0 ] && ok || bad "an interrupted matrix exits non-zero"
has "it says so" "marked incomplete" err.txt
python3 -c 'import json; r = json.load(open("int.json")); assert r["complete"] is False and r["cases"]' && ok ||
  bad "the interrupted run's JSON holds its cases, incomplete"
has "JUnit says incomplete" 'name="complete" value="false' int.xml
expect_fail "an interrupted part is not merged" 1 "an interrupted part" "$R" conform --merge int.json

# isolated: the verdicts of a run in one process; a crash fails its case
I="--device cpu --quick --formats NCHW,NHWC,nChw16c --dtypes f16,i8"
expect_ok "in one process" "$R" conform $I --json one.json
expect_ok "isolated" "$R" conform $I --isolate --json iso.json
python3 - <<'PY' && ok || bad "isolated, the same cases and verdicts"
import json
one, iso = (json.load(open(f))["cases"] for f in ("one.json", "iso.json"))
assert len(one) == 12 and [(c["case"], c["verdict"]) for c in one] == \
    [(c["case"], c["verdict"]) for c in iso], (one, iso)
PY
# (under ASan: the shim after the runtime, and the signal left to kill)
ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0:handle_segv=0 \
RELAYOUT_FAULT_CRASH="nChw16c->NHWC f16" LD_PRELOAD=$SHIM "$R" conform $I --isolate --json crash.json >out.txt 2>&1
[ $? = 1 ] && ok || bad "a crashed case fails the run: $(cat out.txt)"
has "the crash named" "FAIL nChw16c->NHWC f16" out.txt
has "with its signal" "crashed its process (signal 11" out.txt
python3 - <<'PY' && ok || bad "the rest of the matrix completes"
import json
r = json.load(open("crash.json"))
bad = [c for c in r["cases"] if c["verdict"] != "pass"]
assert r["complete"] and len(r["cases"]) == 12 and len(bad) == 1, r
assert "rerun: relayout conform --device cpu" in bad[0]["details"], bad
PY
expect_fail "--isolate with --case" 2 "--isolate runs a matrix" "$R" conform --device cpu --isolate --case 'NCHW->NHWC f16 2x3x4x5'

for args in "--device cpu --quick --full" "--device cpu --case NCHW" "--device cpu --dtypes f8" "--quick" \
  "--device cpu --dtypes f32->i8:0:-3" "--export x --device cpu" "--import corpus --device cpu --quick" \
  "--device cpu --quick --allow-skips"; do
  "$R" conform $args >out.txt 2>&1
  [ $? = 2 ] && ok || bad "conform $args: exit 2 ($(cat out.txt))"
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
