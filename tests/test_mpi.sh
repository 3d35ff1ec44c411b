#!/usr/bin/env bash
# test_mpi.sh - repack --part auto as an MPI job (a -DRELAYOUT_MPI=ON build):
# mpirun with 1, 2 and 3 ranks gives the one-process directory byte for
# byte, index included, written by rank 0 without --finish; a rank that
# fails makes every rank fail and no index is written, and the rerun of the
# job completes it.
# usage: test_mpi.sh PATH/TO/relayout
. "$(dirname "$0")/checks.sh"
# Open MPI refuses root unless told (CI machines run tests as root)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
RULES=(--rule '*.weight:4d=FRACTAL_Z' --rule '*:2d=FRACTAL_NZ')

# A sharded checkpoint of five shards, f16 tensors of odd shapes.
python3 - <<'PY'
import json, os, random, struct
random.seed(5)
os.makedirs("in", exist_ok=True)
index = {"metadata": {"total_size": 0}, "weight_map": {}}
for s in range(5):
    tensors, blobs, at = {}, [], 0
    for t in range(3):
        shape = [random.choice([3, 17, 20]), random.choice([5, 16, 33])]
        if t == 0:
            shape += [3, 3]
        name = f"layer{s}.{t}.weight"
        n = 2
        for d in shape:
            n *= d
        tensors[name] = {"dtype": "F16", "shape": shape,
                         "data_offsets": [at, at + n]}
        blobs.append(bytes(random.randrange(0, 0x7C) if i % 2 else
                           random.randrange(256) for i in range(n)))
        at += n
        shard = f"model-{s + 1:05d}-of-00005.safetensors"
        index["weight_map"][name] = shard
    head = json.dumps(tensors).encode()
    head += b" " * (-len(head) % 8)
    with open(f"in/{shard}", "wb") as f:
        f.write(struct.pack("<Q", len(head)) + head + b"".join(blobs))
    index["metadata"]["total_size"] += at
json.dump(index, open("in/model.safetensors.index.json", "w"))
PY
expect_ok "one process" "$R" repack in one "${RULES[@]}" --device ref
for n in 1 2 3; do
  expect_ok "mpirun -n $n" mpirun -n "$n" "$R" repack in "ranks$n" "${RULES[@]}" --device ref --part auto
  diff -r one "ranks$n" >/dev/null && ok || bad "$n ranks: not the one-process directory: $(diff -r one "ranks$n" | head -5)"
done

# A rank that cannot write its shard (a directory is in the way): the job
# fails (every rank exits non-zero; mpirun may end the others before their
# messages reach it, so only the exit is checked), no index is written, and
# the job rerun once the directory is gone completes.
mkdir -p failed/model-00003-of-00005.safetensors/blocked
mpirun -n 3 "$R" repack in failed "${RULES[@]}" --device ref --part auto >out.txt 2>err.txt
[ $? != 0 ] && ok || bad "a failing rank fails the job"
absent "no index" failed/model.safetensors.index.json
rm -r failed/model-00003-of-00005.safetensors
expect_ok "the job rerun" mpirun -n 3 "$R" repack in failed "${RULES[@]}" --device ref --part auto
diff -r one failed >/dev/null && ok || bad "the rerun's directory: $(diff -r one failed | head -5)"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
