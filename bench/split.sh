#!/usr/bin/env bash
# split.sh - what splitting a sharded repack costs: the benchmark checkpoint
# (bench/make_checkpoint.py) as SHARDS shards, repacked in one process; in
# N parts run one after another (the sum: what the parts add in work) and
# all at once, each followed by --finish; and on two devices in one process
# (--device all over POCL_DEVICES="pthread pthread", PoCL's CPU device
# twice: the same cores, so this measures the cost of the threads and the
# split, not a gain). Every output is checked against the one-process one;
# a first run, not timed, builds every kernel. Each process's peak memory
# (max RSS) comes from GNU time (Debian's `time`).
# usage: bench/split.sh PATH/TO/relayout [PARTS] [SHARDS]
set -euo pipefail
R=$(realpath "$1")
parts=${2:-2}
shards=${3:-4}
here=$(dirname "$0")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 "$here/make_checkpoint.py" "$dir/one.safetensors"
python3 - "$dir" "$shards" <<'PY'
import json, os, struct, sys
d, n = sys.argv[1], int(sys.argv[2])
raw = open(os.path.join(d, "one.safetensors"), "rb").read()
size = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + size])
data = raw[8 + size:]
names = [k for k in header if k != "__metadata__"]
os.mkdir(os.path.join(d, "in"))
weight_map = {}
for s in range(n):
    file = f"model-{s + 1:05d}-of-{n:05d}.safetensors"
    mine = names[s::n]
    h, blobs, at = {}, [], 0
    for k in mine:
        b, e = header[k]["data_offsets"]
        h[k] = dict(header[k], data_offsets=[at, at + e - b])
        blobs.append(data[b:e])
        at += e - b
        weight_map[k] = file
    text = json.dumps(h).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(d, "in", file), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map},
          open(os.path.join(d, "in", "model.safetensors.index.json"), "w"))
PY
rules=(--rule '*.weight:4d=FRACTAL_Z' --rule '*:2d=FRACTAL_NZ')
now() { date +%s.%N; }
# CMD... run under GNU time; its max RSS in MB after it, in $dir/rss
rss() { /usr/bin/time -f %M -o "$dir/rss" "$@"; awk '{ printf "%.0f", $1 / 1024 }' "$dir/rss"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
same() { diff -r "$dir/ref" "$1" >/dev/null || { echo "$1 differs" >&2; exit 1; }; }

cat "$dir"/in/* >/dev/null
# every kernel built first: what is measured is the split, not compiles
"$R" repack "$dir/in" "$dir/warm" "${rules[@]}" 2>/dev/null
t=$(now)
mb=$(rss "$R" repack "$dir/in" "$dir/ref" "${rules[@]}" 2>/dev/null)
one=$(since "$t")
echo "one process: $one s, max RSS $mb MB"

sum=0
for i in $(seq 0 $((parts - 1))); do
  t=$(now)
  mb=$(rss "$R" repack "$dir/in" "$dir/seq" "${rules[@]}" --part "$i/$parts" 2>/dev/null)
  s=$(since "$t")
  sum=$(awk -v a="$sum" -v b="$s" 'BEGIN { print a + b }')
  echo "  part $i/$parts alone: $s s, max RSS $mb MB"
done
t=$(now)
"$R" repack --finish "$dir/seq"
echo "$parts parts in turn: $sum s of parts (x$(awk -v a="$sum" -v b="$one" \
  'BEGIN { printf "%.2f", a / b }') one process), --finish $(since "$t") s"
same "$dir/seq"

t=$(now)
for i in $(seq 0 $((parts - 1))); do
  "$R" repack "$dir/in" "$dir/par" "${rules[@]}" --part "$i/$parts" 2>/dev/null &
done
wait
"$R" repack --finish "$dir/par"
echo "$parts parts at once, then --finish: $(since "$t") s"
same "$dir/par"

t=$(now)
POCL_DEVICES="pthread pthread" "$R" repack "$dir/in" "$dir/dev" \
  "${rules[@]}" --device all 2>/dev/null
echo "two devices in one process (--device all): $(since "$t") s"
same "$dir/dev"
