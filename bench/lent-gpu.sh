#!/usr/bin/env bash
# lent-gpu.sh - what the issues owe from the lent GPU machine, in device
# commands of under 10 minutes each, most wanted first. A task is
# lent 15 minutes of device time in all, start-up included, so each part
# starts a step only while its estimate fits before the deadline and says
# which it skipped.
#   here, once (after apt-get update): bash scripts/carry-deps.sh fetch
#   there, with .carry sent along:     bash bench/lent-gpu.sh tests [SECONDS]
#                                      bash bench/lent-gpu.sh suites [SECONDS]
#                                      bash bench/lent-gpu.sh conform [SECONDS]
#                                      bash bench/lent-gpu.sh preprocess [SECONDS]
#                                      bash bench/lent-gpu.sh speed [SECONDS]
# tests: registers NVIDIA's OpenCL driver, unpacks .carry, builds (build/,
# kept between calls on a warm machine), lists the devices, runs ctest on the
# GPU, then issue 3's conversions on the GPU and on the CPU (PoCL).
# suites: the suite on the GPU (PyTorch as the peer), then on the CPU (oneDNN,
# numpy). conform: the quick conformance matrix on the GPU (its JUnit file
# under $OUT), the cast tests on it, and the quantizing cast's speed.
# preprocess: the preprocessing tests on the GPU, the suite's preprocessing
# and cast rows on it, and JPEG files end to end (where python3 has cv2).
# speed: issue 69's rows on the GPU: moves beside their generic kernels,
# casts, preprocessing, the host link (PyTorch), the benchmark checkpoint's
# repack from cold, per-channel quantizing and the weights from host arrays.
# SECONDS: the part's own deadline (default 570). Each step's output
# goes to its own file under $OUT (else build/lent-gpu-out/, ignored by git)
# and, whole, to stdout.
# LENT_GPU (default gpu) names the device the GPU steps use: LENT_GPU=cpu
# rehearses the steps on a machine without one.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
part=${1:-}
case $part in
tests | suites | conform | preprocess | speed) ;;
*)
  echo "usage: bench/lent-gpu.sh tests|suites|conform|preprocess|speed [SECONDS]" >&2
  exit 2
  ;;
esac
deadline=$((SECONDS + ${2:-570}))
out=${OUT:-build/lent-gpu-out}
gpu=${LENT_GPU:-gpu}
mkdir -p "$out"

# step NAME ESTIMATE_SECONDS COMMAND...: runs it when it fits, into
# $out/NAME.txt, and says how it ended and how long it took. The part exits
# 1 when a step failed, 3 when none failed but one was skipped.
failed=0 skipped=0
step() {
  local name=$1 estimate=$2 t0=$SECONDS left=$((deadline - SECONDS)) rc
  shift 2
  if ((estimate > left)); then
    echo "== $name: skipped ($((left > 0 ? left : 0)) s left, needs about $estimate)"
    skipped=1
    return
  fi
  echo "== $name"
  "$@" 2>&1 | tee "$out/$name.txt"
  rc=${PIPESTATUS[0]}
  ((rc == 0)) || failed=1
  echo "== $name: exit $rc, $((SECONDS - t0)) s"
}

# convs DEVICE RUNS 'FROM TO SHAPE [OPTION...]'...: each conversion's bench
# line (its own kernel, the generic one in the same run, the reference check).
convs() {
  local dev=$1 runs=$2 row from to shape args rc=0
  shift 2
  for row; do
    read -r from to shape args <<<"$row"
    echo "-- $from -> $to $shape $args"
    # shellcheck disable=SC2086 # args is several options
    build/relayout bench --device "$dev" --from "$from" --to "$to" \
      --shape "$shape" $args --runs "$runs" --json || rc=1
  done
  return $rc
}

# Issue 3's conversions, 64 MiB and more.
issue3=("NCHW NHWC 64x256x56x56" "NCHW NC1HWC0 64x256x56x56"
  "NCHW NC1HWC0 64x256x56x56 --dtype f16" "ND FRACTAL_NZ 8197x8195 --dtype f16"
  "NCHW FRACTAL_Z 2048x2048x3x3" "NCHW FRACTAL_Z 2048x2048x3x3 --dtype f16")
# Issue 69's moves: the rows whose generic kernel lagged, 1-byte moves.
moves=("NCHW NHWC 64x256x56x56 --dtype i8" "NHWC NCHW 64x56x56x256 --dtype i8"
  "NCHW NC1HWC0 64x256x56x56 --dtype f16" "NCHW 4N 64x256x56x56 --dtype i8"
  "NCHW nChw16c 64x256x56x56 --dtype i8" "nChw8c nChw16c 64x256x56x56"
  "ND FRACTAL_NZ 4096x11008 --dtype f16" "ND FRACTAL_NZ 4096x11008 --dtype i8"
  "NCHW FRACTAL_Z 2048x2048x3x3 --dtype f16")
# Casts: the float casts and quantizing, per tensor and per channel (the
# generic kernel's line: the GPU tiles' channel kept as a coordinate), its
# scales made by cast_scales.
scales=build/lent-gpu-s512.npy
casts=("NCHW NC1HWC0 64x256x56x56 --to-dtype f16"
  "NCHW NC1HWC0 64x256x56x56 --dtype f16 --to-dtype f32"
  "ND FRACTAL_NZ 4096x11008 --to-dtype bf16"
  "NCHW NC1HWC0 64x256x56x56 --to-dtype i8 --scale 0.05"
  "NCHW FRACTAL_Z 512x512x3x3 --to-dtype i8 --scale $scales --axis N")
cast_scales() { # an .npy of 512 f32s, written without numpy
  python3 - "$scales" <<'PY'
import struct, sys
h = "{'descr': '<f4', 'fortran_order': False, 'shape': (512,), }"
h += " " * (-(11 + len(h)) % 64) + "\n"
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode())
    f.write(struct.pack("<512f", *[i % 7 * 0.01 + 0.02 for i in range(512)]))
PY
}

# The benchmark checkpoint's repack on device $1, its caches (relayout's,
# PoCL's, NVIDIA's) empty scratch folders: the cold command, its background
# build awaited (two minutes at most), then the second and warm runs.
repack_rounds() {
  local dev=$1 ck=/dev/shm/rl-ck.safetensors out=/dev/shm/rl-out.safetensors
  local round t0 waited rc=0 caches=/dev/shm/rl-caches
  python3 bench/make_checkpoint.py "$ck" || return
  rm -rf "$caches"
  for round in cold second warm warm; do
    rm -f "$out"
    t0=$(date +%s.%N)
    RELAYOUT_CACHE_DIR=$caches/relayout POCL_CACHE_DIR=$caches/pocl \
      CUDA_CACHE_PATH=$caches/nvidia build/relayout repack --device "$dev" \
      "$ck" "$out" --rule '*.weight:4d=FRACTAL_Z' --rule '*:2d=FRACTAL_NZ' || rc=1
    echo "$round: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }') s"
    for ((waited = 0; waited < 600; waited++)); do
      pgrep -f "relayout repack --warm .*$ck" >/dev/null || break
      sleep 0.2
    done
  done
  rm -rf "$ck" "$out" "$caches"
  return $rc
}

# A test run where the device test runs on the GPU, the tests side by side
# (each mostly compiles, on its own core), stopped at the part's deadline.
gpu_ctest() {
  (cd build && RELAYOUT_TEST_DEVICE=$gpu timeout $((deadline - SECONDS)) \
    ctest -j "$(nproc)" --output-on-failure)
}

build() {
  [ -d .carry ] || echo "no .carry: jansson, the loader's headers and oneDNN may be missing"
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release &&
    cmake --build build -j"$(nproc)" >/dev/null && build/relayout devices
}

. scripts/opencl-nvidia.sh
[ ! -d .carry ] || . scripts/carry-deps.sh
case $part in
tests)
  step build 120 build
  step ctest-gpu 240 gpu_ctest
  step issue3-gpu 90 convs "$gpu" 20 "${issue3[@]}"
  cast_scales
  step casts-gpu 50 convs "$gpu" 10 "${casts[@]}"
  step issue3-cpu 150 convs cpu 20 "${issue3[@]}"
  ;;
suites)
  [ -x build/relayout ] || step build 120 build
  step suite-gpu-act 200 build/relayout bench --suite --device "$gpu" --runs 10 --rows act
  step suite-gpu-weights 120 build/relayout bench --suite --device "$gpu" --runs 10 --rows resnet50,linear,odd
  step suite-cpu 240 build/relayout bench --suite --device cpu --runs 10
  ;;
conform)
  [ -x build/relayout ] || step build 120 build
  step conform-gpu 90 build/relayout conform --device "$gpu" --quick --junit "$out/conform-gpu.xml"
  step quantize-gpu 20 build/relayout bench --device "$gpu" --from NCHW --to NC1HWC0 --shape 64x256x56x56 --to-dtype i8 --scale 0.05 --runs 10
  step casts-ctest-gpu 90 env RELAYOUT_TEST_DEVICE="$gpu" ctest --test-dir build -j "$(nproc)" -R '^(casts|cast_values)$' --output-on-failure
  ;;
preprocess)
  [ -x build/relayout ] || step build 120 build
  step preprocess-ctest-gpu 60 env RELAYOUT_TEST_DEVICE="$gpu" ctest --test-dir build -R '^(preprocess_plan|images)$' --output-on-failure
  step suite-gpu-preprocess 90 build/relayout bench --suite --device "$gpu" --runs 10 --rows preprocess
  step suite-gpu-cast 150 build/relayout bench --suite --device "$gpu" --runs 10 --rows cast
  if python3 -c 'import cv2' 2>/dev/null; then
    step images-gpu 150 python3 bench/images.py build/relayout 256 224 224 "$gpu" 3 NC1HWC0
  else
    echo "== images-gpu: skipped (python3 has no cv2)"
  fi
  ;;
speed)
  [ -x build/relayout ] || step build 120 build
  step moves-gpu 80 convs "$gpu" 10 "${moves[@]}"
  step suite-gpu-preprocess 60 build/relayout bench --suite --device "$gpu" --runs 10 --rows preprocess --json
  cast_scales
  step casts-gpu 50 convs "$gpu" 10 "${casts[@]}"
  step pcie 20 python3 bench/pcie.py
  step repack-gpu 60 repack_rounds "$gpu"
  step suite-gpu-per-channel 90 build/relayout bench --suite --device "$gpu" --runs 5 --rows 'per channel,resnet50 conv OIHW->FRACTAL_Z f16' --json
  ;;
esac
((failed)) && exit 1
((skipped)) && exit 3
exit 0
