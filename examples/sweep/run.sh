#!/bin/sh
# A small sweep on the cluster of SLURM_CONF (e.g. one `loom up` started):
# 2 learning rates x 2 batch sizes x 2 optimizers = 8 tasks, 4 at a time,
# then the table of parameters against state, exit code and elapsed time.
set -e
cd "$(dirname "$0")"
id=$(loom sweep --parsable --throttle 4 learning-rate=0.01,0.1 batch-size=16,64 \
    optimizer=adam,sgd sweep.sh)
echo "sweep $id submitted; waiting for its tasks"
while squeue -h -j "$id" | grep -q .; do sleep 1; done
loom sweep status "$id"
