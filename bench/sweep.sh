#!/usr/bin/env bash
# sweep.sh - every ordered pair of the 4-d named formats, one conversion
# each (relayout bench --json), listed slowest first by the ratio to the
# device's copy kernel: where a conversion falls off a cliff. Each output is
# compared with the reference's by relayout bench; a pair that differs is
# listed as DIFFERS, one that fails as FAILED.
# usage: bench/sweep.sh PATH/TO/relayout [DEVICE] [NxCxHxW] [DTYPE...]
# (defaults: auto, 32x256x28x28, u4 i8 f16); a DTYPE of the form FROM:TO,
# such as f32:f16, sweeps that cast (bench --to-dtype; integer sides are
# quantized per tensor, bench's default scale).
set -euo pipefail
R=$(realpath "$1")
device=${2:-auto}
IFS=x read -r n c h w <<<"${3:-32x256x28x28}"
dtypes=("${@:4}")
[ ${#dtypes[@]} -gt 0 ] || dtypes=(u4 i8 f16)
formats=(NCHW NHWC HWCN NC1HWC0 FRACTAL_Z nChw8c nChw16c NCHW4 NCHW32 NCHW64
  CHWN4 4N 2N)

# The extents in a format's logical order.
shape_of() {
  case $1 in
  NHWC) echo "${n}x${h}x${w}x${c}" ;;
  HWCN) echo "${h}x${w}x${c}x${n}" ;;
  *) echo "${n}x${c}x${h}x${w}" ;;
  esac
}

for t in "${dtypes[@]}"; do
  cast=()
  [[ $t != *:* ]] || cast=(--to-dtype "${t#*:}")
  for a in "${formats[@]}"; do
    for b in "${formats[@]}"; do
      [ "$a" != "$b" ] || continue
      json=$("$R" bench --device "$device" --from "$a" --to "$b" \
        --shape "$(shape_of "$a")" --dtype "${t%%:*}" \
        "${cast[@]}" --runs 3 --json 2>/dev/null) ||
        true
      python3 -c '
import json, sys
t, a, b, text = sys.argv[1:]
try:
    j = json.loads(text)
except ValueError:
    print("FAILED %s %s -> %s" % (t, a, b))
    sys.exit()
same = "" if j["same_as_reference"] else "  DIFFERS"
print("%.3f %8.2f GB/s  %-6s %s %s -> %s%s" % (j["ratio_copy_kernel"],
      j["gbps"], "generic" if j["kernel"] == "generic" else j["family"],
      t, a, b, same))' "$t" "$a" "$b" "$json"
    done
  done
done | sort -n
