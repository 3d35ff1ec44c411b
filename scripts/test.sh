#!/usr/bin/env bash
# test.sh [SUITE] - builds relayout and runs its tests. With no SUITE (what CI
# runs): the format check, a warnings-as-errors build with every test, and
# the same tests under AddressSanitizer + UBSan. A SUITE runs one part:
#   format  clang-format over the sources
#   unit    the tests that need no device (layouts, reference, planner)
#   device  the tests on an OpenCL device (PoCL's CPU device here)
#   fuzz    the fuzzers' committed corpora, replayed
#   asan    every test under AddressSanitizer + UBSan
#   python  the Python package: pip install . into a venv, its pytest suite
set -euo pipefail
cd "$(dirname "$0")/.."
suite=${1:-all}
case $suite in
all | format | unit | device | fuzz | asan | python) ;;
*)
  sed -n '2,10s/^# \{0,1\}//p' "$0" >&2
  exit 2
  ;;
esac
. scripts/deps.sh
deps_install
jobs=$(nproc)

format() {
  echo "== format (clang-format --dry-run)"
  local files
  files=$(git ls-files '*.c' '*.h' 2>/dev/null || find include lib cli bench tests -name '*.[ch]')
  clang-format --dry-run --Werror $files
}

build() {
  echo "== build (-Werror)"
  cmake -S . -B build -DRELAYOUT_WERROR=ON -DRELAYOUT_MPI=ON >/dev/null
  cmake --build build -j"$jobs" >/dev/null
}

# Runs the tests of a label (none: all) in build.
tests() {
  echo "== test${1:+ ($1)}"
  (cd build && ctest --output-on-failure -j"$jobs" ${1:+-L "$1"})
}

asan() {
  echo "== build and test (AddressSanitizer + UBSan)"
  # the device test loads the kernels the plain build compiled (same sources)
  cmake -S . -B build-asan -DRELAYOUT_WERROR=ON -DRELAYOUT_SANITIZE=ON \
    -DCMAKE_BUILD_TYPE=Debug \
    -DRELAYOUT_TEST_POCL_CACHE="$PWD/build/tests/pocl-cache" >/dev/null
  cmake --build build-asan -j"$jobs" >/dev/null
  # LeakSanitizer's tracer itself now and then crashes at a test's exit
  # ("Tracer caught signal 11", every check passed): failed tests run once
  # more, and a failure that repeats fails the run
  (cd build-asan && export ASAN_OPTIONS=detect_leaks=1 &&
    { ctest --output-on-failure -j"$jobs" ||
      { echo "== the failed tests once more"; ctest --rerun-failed --output-on-failure; }; })
}

# The package as a user installs it (pip fetches scikit-build-core from
# PyPI), in a venv that sees Debian's numpy and pytest, with the
# safetensors package (PyPI) its repack test reads and writes files with,
# and its dask and ray extras, which the pipeline test runs clusters of.
python_package() {
  echo "== python (pip install . and pytest)"
  local venv=build/python-venv
  rm -rf "$venv"
  /usr/bin/python3 -m venv --system-site-packages "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check ".[dask,ray]" safetensors
  "$venv/bin/python" -m pytest -q -p no:cacheprovider python/tests
}

# one command per line: set -e does not reach into functions run in a list
case $suite in
all)
  format
  build
  tests
  python_package
  asan
  ;;
format) format ;;
asan) asan ;;
python) python_package ;;
*)
  build
  tests "$suite"
  ;;
esac
