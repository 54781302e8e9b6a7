#!/bin/bash
#SBATCH --job-name=hyperparameter-sweep
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --gres=gpu:1
#SBATCH --time=00:10:00
#SBATCH --output=sweep_%A_%a.out
#SBATCH --error=sweep_%A_%a.err

# Seed document 004, §7.3.3 (job arrays for parameter sweeps), without its
# index arithmetic: `loom sweep` gives each task its parameters, as arguments
# ("$@": --learning-rate=0.01 --batch-size=32 --optimizer=adam) and as
# environment variables (LOOM_PARAM_LEARNING_RATE, ...). Submit it with
#   loom sweep --throttle 4 learning-rate=0.001,0.01,0.1,0.0001,0.00001 \
#       batch-size=16,32,64,128 optimizer=adam,sgd,adamw,rmsprop sweep.sh
# (80 tasks, at most 4 at once), or run ./run.sh for a small grid.

echo "Task $SLURM_ARRAY_TASK_ID: $LOOM_SWEEP_PARAMS"

python3 "$SLURM_SUBMIT_DIR/../seed004/train_model.py" \
    "$@" \
    --epochs 2 \
    --output-dir "$SLURM_SUBMIT_DIR/results/sweep_${SLURM_ARRAY_JOB_ID}/${SLURM_ARRAY_TASK_ID}"
