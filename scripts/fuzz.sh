#!/usr/bin/env bash
# fuzz.sh - builds the libFuzzer targets (tests/fuzz/, clang with ASan and
# UBSan) in build-fuzz and runs each for SECONDS (default 60), starting from
# its committed corpus. Inputs that reach new code go to
# build-fuzz/corpus/NAME; a failing input to build-fuzz/crash-NAME-*.
# The args target's own output (every rejection's message) is closed; its
# failures show when build-fuzz/tests/fuzz/replay_args replays the input.
# Usage: bash scripts/fuzz.sh [SECONDS [NAME...]]  (NAME: layout, files, args, aipp, images)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
names=("${@:2}")
[ ${#names[@]} -gt 0 ] || names=(layout files args aipp images)
command -v clang >/dev/null ||
  { echo "fuzz.sh: needs clang and libFuzzer:" \
    "apt-get install clang libclang-rt-dev" >&2; exit 1; }
CC=clang cmake -S . -B build-fuzz -DRELAYOUT_FUZZ=ON >/dev/null
for name in "${names[@]}"; do
  cmake --build build-fuzz -j"$(nproc)" --target "fuzz_$name" >/dev/null
  mkdir -p "build-fuzz/corpus/$name"
  quiet=0
  [ "$name" != args ] || quiet=2
  "build-fuzz/tests/fuzz/fuzz_$name" -max_total_time="$seconds" \
    -max_len=4096 -close_fd_mask=$quiet \
    -artifact_prefix="build-fuzz/crash-$name-" \
    "build-fuzz/corpus/$name" "tests/fuzz/corpus/$name"
done
