#!/usr/bin/env python3
"""CPU step of the pipeline example: accuracy of the trained model."""
import json
import sys

rows, w = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ok = sum((sum(a * b for a, b in zip(w, r["x"])) > 0) == (r["y"] == 1) for r in rows)
print(f"evaluate: accuracy {ok / len(rows):.3f} on {len(rows)} rows")
