#!/usr/bin/env python3
"""One rank of the pipeline's training step: logistic regression on its shard
of the data; the ranks' weights are averaged through files (no MPI needed)."""
import json
import math
import os
import sys
import time

data_file, model_file = sys.argv[1], sys.argv[2]
rank, size = int(os.environ["SLURM_PROCID"]), int(os.environ["SLURM_NTASKS"])
rows = json.load(open(data_file))[rank::size]
w = [0.0] * 4
for _ in range(20):
    for r in rows:
        p = 1 / (1 + math.exp(-sum(a * b for a, b in zip(w, r["x"]))))
        w = [wi - 0.1 * (p - r["y"]) * xi for wi, xi in zip(w, r["x"])]
print(f"rank {rank}/{size} on {os.environ.get('SLURMD_NODENAME')} "
      f"GPUs {os.environ.get('CUDA_VISIBLE_DEVICES')}: {len(rows)} rows")
with open(f"{model_file}.{rank}", "w") as f:
    json.dump(w, f)
if rank == 0:
    parts = [f"{model_file}.{r}" for r in range(size)]
    while not all(os.path.exists(p) for p in parts):
        time.sleep(0.1)
    time.sleep(0.2)
    ws = [json.load(open(p)) for p in parts]
    with open(model_file, "w") as f:
        json.dump([sum(c) / size for c in zip(*ws)], f)
