#!/bin/sh
# Submit the three-step pipeline on the cluster of SLURM_CONF (e.g. one
# `loom up --nodes 2 --gpus-per-node 2` started), wait, and show it.
set -e
cd "$(dirname "$0")"
loom pipeline pipeline.json
while loom pipeline status demo | grep -Eq 'PENDING|RUNNING|COMPLETING'; do sleep 1; done
loom pipeline status demo
cat demo.*.out
