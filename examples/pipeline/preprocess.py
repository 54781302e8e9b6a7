#!/usr/bin/env python3
"""CPU step of the pipeline example: makes a small synthetic data set."""
import argparse
import json
import os
import random

ap = argparse.ArgumentParser()
ap.add_argument("--out", required=True)
a = ap.parse_args()
rnd = random.Random(7)
w = [rnd.uniform(-1, 1) for _ in range(4)]
rows = []
for _ in range(400):
    x = [rnd.gauss(0, 1) for _ in range(4)]
    rows.append({"x": x, "y": int(sum(a * b for a, b in zip(w, x)) > 0)})
with open(a.out, "w") as f:
    json.dump(rows, f)
print(f"preprocess: {len(rows)} rows on {os.environ.get('SLURMD_NODENAME')} "
      f"with {os.environ.get('SLURM_CPUS_PER_TASK')} CPUs")
