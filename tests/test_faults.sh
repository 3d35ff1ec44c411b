#!/usr/bin/env bash
# test_faults.sh - OpenCL failing part-way: with each OpenCL entry point the
# library uses made to fail at its 1st, 2nd, ... call (tests/fault/clfault.c,
# preloaded), a convert (in place and through copies), a relayout_plans_run
# batch and a repack each end in a clear error with no output file, or in the
# reference's result; never a crash, a leak (under the sanitizer build), a
# half-written output or wrong bytes.
# usage: test_faults.sh PATH/TO/relayout PATH/TO/libclfault.so PATH/TO/fault_batch
set -u
R=$1 SHIM=$2 BATCH=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 2
export RELAYOUT_CACHE_DIR=off ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0
# each plan's own kernel built when it is made: the calls come in one order
export RELAYOUT_KERNELS=specialised
pass=0 fail=0 runs=0
bad() { fail=$((fail + 1)); echo "FAILED: $*" >&2; }

head -c 1020 /dev/urandom >in.bin
"$R" convert --device ref --from NCHW --to NC1HWC0 --shape 2x17x5x3 --dtype f16 in.bin ref.bin || exit 2
/usr/bin/env python3 - <<'PY' || exit 2
import json, os, struct
tensors = {"w": ("F16", [8, 3, 3, 3]), "b": ("F32", [8]), "m": ("F16", [40, 20])}
head, data = {}, b""
for name, (dt, shape) in tensors.items():
    n = 2 if dt == "F16" else 4
    for d in shape:
        n *= d
    head[name] = {"dtype": dt, "shape": shape, "data_offsets": [len(data), len(data) + n]}
    data += os.urandom(n)
text = json.dumps(head).encode()
text += b" " * (-len(text) % 8)
open("m.st", "wb").write(struct.pack("<Q", len(text)) + text + data)
PY
rules="--rule w:4d=FRACTAL_Z --rule m:2d=FRACTAL_NZ"
"$R" repack --device ref m.st ref.st $rules 2>/dev/null || exit 2

# check NAME RC: the run that just ended (stdout in out.txt, stderr in
# err.txt) ended as it may.
check_convert() {
  local name=$1 rc=$2
  if [ "$rc" = 0 ] && cmp -s out.bin ref.bin; then pass=$((pass + 1))
  elif [ "$rc" = 1 ] && [ ! -e out.bin ] && grep -q "relayout convert: error: " err.txt; then pass=$((pass + 1))
  else bad "$name: exit $rc, $(head -c 300 err.txt)"; fi
}
check_repack() {
  local name=$1 rc=$2
  if [ "$rc" = 0 ] && cmp -s out.st ref.st; then pass=$((pass + 1))
  elif [ "$rc" = 1 ] && [ ! -e out.st ] && grep -q "relayout repack: error: " err.txt; then pass=$((pass + 1))
  else bad "$name: exit $rc, $(head -c 300 err.txt)"; fi
}
check_batch() {
  local name=$1 rc=$2
  if [ "$rc" = 0 ] && grep -Eq "^(same|error: .)" out.txt; then pass=$((pass + 1))
  else bad "$name: exit $rc, $(head -c 300 out.txt err.txt)"; fi
}
leftovers() {
  if ls ./*.tmp-* >/dev/null 2>&1; then bad "$1: a temp file was left"; rm -rf ./*.tmp-*; fi
}

# sweep NAME CHECK CMD...: runs CMD once counting OpenCL calls, then once
# per entry point and call number with that call failing.
sweep() {
  local name=$1 check=$2 fn count n rc
  shift 2
  rm -f counts.txt out.bin out.st
  RELAYOUT_FAULT_COUNTS=counts.txt LD_PRELOAD=$SHIM "$@" >out.txt 2>err.txt
  $check "$name, no fault" $?
  [ -s counts.txt ] || bad "$name: no OpenCL call was counted"
  while read -r fn count; do
    for ((n = 1; n <= count; n++)); do
      rm -f out.bin out.st
      RELAYOUT_FAULT=$fn:$n LD_PRELOAD=$SHIM "$@" >out.txt 2>err.txt
      rc=$?
      runs=$((runs + 1))
      $check "$name, $fn call $n of $count" $rc
      leftovers "$name, $fn call $n"
    done
  done <counts.txt
}

convert() { "$R" convert --device cpu --from NCHW --to NC1HWC0 --shape 2x17x5x3 --dtype f16 in.bin out.bin; }
# A kernel the compiler refuses: the reference does the work, and the note
# carries the compiler's own error line, numbered as the kernel source is
# (the error stands just before it, at line 1, past the library's prelude).
RELAYOUT_FAULT_SOURCE="injected by clfault" LD_PRELOAD=$SHIM convert >out.txt 2>err.txt
check_convert "a kernel that does not build" $?
if grep -Eq "kernel build failed: .*[^0-9]1:[0-9]+: (error: )?injected by clfault" err.txt; then pass=$((pass + 1))
else bad "the note of a kernel that does not build: $(cat err.txt)"; fi
sweep "convert in place" check_convert convert
RELAYOUT_UNIFIED=0 sweep "convert through copies" check_convert convert
RELAYOUT_KERNELS=generic sweep "convert, generic kernel" check_convert convert
# its own kernel building on a thread beside the run: calls interleave
RELAYOUT_KERNELS=auto sweep "convert, own kernel building" check_convert convert
sweep "plans_run batch" check_batch "$BATCH"
sweep "repack" check_repack "$R" repack --device cpu m.st out.st $rules
RELAYOUT_UNIFIED=0 sweep "repack through copies" check_repack "$R" repack --device cpu m.st out.st $rules
echo "$runs runs with a failing OpenCL call"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
