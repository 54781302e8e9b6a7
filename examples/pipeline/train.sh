#!/bin/bash
# Multi-GPU step of the pipeline example: one task per GPU on each node
# (srun starts them), each trains on its shard, rank 0 averages the models.
echo "train: nodes $SLURM_JOB_NODELIST, $SLURM_NTASKS tasks"
srun python3 train_rank.py data.json model.json
