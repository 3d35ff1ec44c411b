#!/usr/bin/env bash
# repack.sh - the repack benchmark: a generated ~1 GiB fp16 checkpoint
# (bench/make_checkpoint.py) repacked end to end, against cp of the same file
# as the ceiling. Both read a file in the page cache and end with the output
# on disk (cp is followed by an fsync, as repack commits with one). GB/s
# counts bytes read + written.
# usage: bench/repack.sh PATH/TO/relayout [DEVICE] [RUNS]
set -euo pipefail
R=$(realpath "$1")
device=${2:-auto}
runs=${3:-3}
here=$(dirname "$0")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 "$here/make_checkpoint.py" "$dir/in.safetensors"
in_bytes=$(stat -c %s "$dir/in.safetensors")
rules=(--rule '*.weight:4d=FRACTAL_Z' --rule '*:2d=FRACTAL_NZ')

now() { date +%s.%N; }
rate() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.3f", b / s / 1e9 }'; }

cat "$dir/in.safetensors" >/dev/null
for i in $(seq "$runs"); do
  t0=$(now)
  cp "$dir/in.safetensors" "$dir/cp.safetensors"
  sync "$dir/cp.safetensors"
  t1=$(now)
  "$R" repack --device "$device" --json "$dir/in.safetensors" "$dir/out.safetensors" \
    "${rules[@]}" >"$dir/summary.json"
  t2=$(now)
  "$R" repack --device "$device" --restore "$dir/out.safetensors" "$dir/back.safetensors"
  t3=$(now)
  cmp "$dir/in.safetensors" "$dir/back.safetensors"
  out_bytes=$(stat -c %s "$dir/out.safetensors")
  cp_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
  rp_s=$(awk -v a="$t1" -v b="$t2" 'BEGIN { print b - a }')
  rs_s=$(awk -v a="$t2" -v b="$t3" 'BEGIN { print b - a }')
  cp_r=$(rate $((2 * in_bytes)) "$cp_s")
  rp_r=$(rate $((in_bytes + out_bytes)) "$rp_s")
  rs_r=$(rate $((in_bytes + out_bytes)) "$rs_s")
  echo "run $i: cp $cp_r GB/s ($cp_s s); repack $rp_r GB/s ($rp_s s," \
    "$(awk -v a="$rp_r" -v b="$cp_r" 'BEGIN { printf "%.2f", a / b }') of cp);" \
    "restore $rs_r GB/s ($rs_s s); restored file identical"
  rm -f "$dir/cp.safetensors" "$dir/out.safetensors" "$dir/back.safetensors"
done
grep -m1 '"device"' "$dir/summary.json"
