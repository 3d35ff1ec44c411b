#!/usr/bin/env bash
# demo.sh - builds relayout and runs its main job on the built-in sample:
# the Ascend guide's 20x28 f16 array, ND -> FRACTAL_NZ, printed.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
deps_install
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
build/relayout sample "$out/sample.npy"
echo "== relayout explain FRACTAL_NZ --shape 20x28 --dtype f16"
build/relayout explain FRACTAL_NZ --shape 20x28 --dtype f16
echo
echo "== relayout convert --from ND --to FRACTAL_NZ sample.npy nz.npy; relayout show --full nz.npy"
build/relayout convert --from ND --to FRACTAL_NZ "$out/sample.npy" "$out/nz.npy"
build/relayout show --full "$out/nz.npy"
