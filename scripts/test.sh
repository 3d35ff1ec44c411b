#!/usr/bin/env bash
# test.sh - builds relayout and runs the whole test suite: a warnings-as-errors
# build, the same suite under AddressSanitizer + UBSan, and the format check.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
deps_install
jobs=$(nproc)

echo "== format (clang-format --dry-run)"
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find include host cli tests -name '*.[ch]')
clang-format --dry-run --Werror $files

echo "== build and test (-Werror)"
cmake -S . -B build -DRELAYOUT_WERROR=ON >/dev/null
cmake --build build -j"$jobs" >/dev/null
(cd build && ctest --output-on-failure -j"$jobs")

echo "== build and test (AddressSanitizer + UBSan)"
# the device test loads the kernels the first pass compiled (same sources)
cmake -S . -B build-asan -DRELAYOUT_WERROR=ON -DRELAYOUT_SANITIZE=ON \
  -DCMAKE_BUILD_TYPE=Debug \
  -DRELAYOUT_TEST_POCL_CACHE="$PWD/build/tests/pocl-cache" >/dev/null
cmake --build build-asan -j"$jobs" >/dev/null
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j"$jobs")
