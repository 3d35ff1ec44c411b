#!/usr/bin/env bash
# test_peers.sh - relayout and two other libraries agree with the reference
#
# Runs suite rows (bench/suite.c) once each. relayout's device output is
# compared byte for byte with the scalar reference's, and so are the outputs
# of oneDNN's reorder and numpy's pad + reshape + transpose, which redo the
# conversion from the layout descriptors alone (every buffer poisoned first,
# padding included); on a quantizing row both cast too (per tensor, and
# per channel with scales from the weights). Each row's shapes, listed one
# by one in the JSON, must add up to the row (ResNet-50: 53 weights) and
# agree with its verdicts. A
# row of many weights is run again as one batch (each weight on buffers of
# its own, one wait), relayout's and oneDNN's outputs checked the same way,
# and then from host arrays (one relayout_plans_run, and relayout_plan_run
# on each weight), both outputs checked.
# A row that fails (the driver out of resources at its first buffer:
# tests/fault/clfault.c, preloaded) is said, and the suite goes on to the
# next.
# A peer the build did not find is reported and skipped;
# any other peer that does not run fails. scripts/deps.sh installs both, so
# CI runs them.
# usage: test_peers.sh PATH/TO/relayout PATH/TO/libclfault.so
set -u
R=$1 SHIM=$2
rows="resnet50 conv OIHW->FRACTAL_Z f32,act NCHW->NC1HWC0 i8,act NCHW->CHWN4 i8"
rows="$rows,act NCHW->4N i8,act NCHW->nChw16c i8,act nChw8c->nChw16c f32"
rows="$rows,cast NCHW->NC1HWC0 f32->i8 scale 0.05"
rows="$rows,cast resnet50 conv f32->i8 per channel OIHW->FRACTAL_Z"
out=$("$R" bench --suite --device cpu --runs 1 --json --rows "$rows") || {
  echo "FAILED: relayout bench --suite exited $?"
  echo "0 passed, 1 failed"
  exit 1
}
# A row that fails is said, and the rows after it still run: the first
# buffer the process creates is the per-channel row's.
err=$(mktemp)
rest=$(RELAYOUT_FAULT=clCreateBuffer:1 LD_PRELOAD=$SHIM \
  ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
  "$R" bench --suite --device cpu --runs 1 \
  --json --rows "f32->i8 per channel,cast image" 2>"$err")
code=$?
said=$(cat "$err")
rm -f "$err"
if [ $code = 1 ] && [[ $said == *"row 'cast resnet50 conv f32->i8 per channel"* ]] &&
  [[ $said == *"1 row of the suite failed"* ]] &&
  [[ $rest == *'"row":"cast image NHWC->NC1HWC0 u8->f16"'* ]]; then
  export SUITE_GOES_ON=1
else
  echo "FAILED: a row whose first buffer fails (exit $code): $said"
  export SUITE_GOES_ON=0
fi
printf '%s\n' "$out" | /usr/bin/env python3 -c '
import json, os, sys
rows = [json.loads(line) for line in sys.stdin]
passed = failed = 0
if os.environ["SUITE_GOES_ON"] == "1":
    passed += 1
else:
    failed += 1
ran = {}
absent = ("not built with", "no python with")
for r in rows:  # a ResNet-50 row: 53 weights in all, else one tensor
    want = 53 if "resnet50" in r["row"] else 1
    if r["same_as_reference"]:
        passed += 1
    else:
        failed += 1
        print("FAILED: relayout differs from the reference on %s" % r["row"])
    if r["tensors"] != want:
        failed += 1
        print("FAILED: %s: %d tensors (want %d)" % (r["row"], r["tensors"], want))
    if r.get("host_arrays") and not r["each_gbps"] > 0:
        failed += 1
        print("FAILED: %s from host arrays: no figure for one call each"
              % r["row"])
    if r["batch"]:
        for name, p in r["peers"].items():
            if name == "oneDNN" and p["note"].startswith(absent):
                print("skipped: %s on %s: %s" % (name, r["row"], p["note"]))
            elif name == "oneDNN" and not p.get("same_as_reference"):
                failed += 1
                print("FAILED: oneDNN as a batch on %s: %s" % (r["row"], p))
            elif name != "oneDNN" and "gbps" in p:
                failed += 1
                print("FAILED: %s ran a batch on %s" % (name, r["row"]))
            else:
                passed += 1
        continue
    # each shape on its own (--json): all of them, agreeing with the row
    shapes = r["shapes"]
    count = sum(s["count"] for s in shapes)
    same = all(s["same_as_reference"] for s in shapes)
    if count != want or same != r["same_as_reference"] or \
            min(s["gbps"] for s in shapes) <= 0:
        failed += 1
        print("FAILED: %s: %d weights listed (want %d), same as reference %s"
              % (r["row"], count, want, same))
    for name, p in r["peers"].items():
        if "gbps" in p and (
                not all(name in s["peers"] for s in shapes) or
                all(s["peers"][name]["same_as_reference"] for s in shapes)
                != p["same_as_reference"]):
            failed += 1
            print("FAILED: %s per shape disagrees with its row on %s"
                  % (name, r["row"]))
    for name, p in r["peers"].items():
        if "gbps" not in p:
            if p["note"].startswith(absent):
                print("skipped: %s on %s: %s" % (name, r["row"], p["note"]))
            else:
                failed += 1
                print("FAILED: %s did not run on %s: %s" % (name, r["row"], p["note"]))
            continue
        ran[name] = ran.get(name, 0) + 1
        if p["same_as_reference"]:
            passed += 1
        else:
            failed += 1
            print("FAILED: %s differs from the reference on %s" % (name, r["row"]))
batches = sum(1 for r in rows if r["batch"])
hosts = sum(1 for r in rows if r.get("host_arrays"))
if len(rows) != 12 or batches != 4 or hosts != 2:
    failed += 1
    print("FAILED: %d lines, %d batches, %d from host arrays, not 8 rows, "
          "2 batches and 2 from host arrays" % (len(rows), batches, hosts))
print("peers that ran: %s" % ran)
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed or not passed else 0)
'
