#!/bin/sh
#SBATCH --signal=B:USR1@30 --mail-type=BEGIN,END,bogus --exclusive=user
#SBATCH --nice --priority=TOP -k --requeue --no-requeue --open-mode=a
#SBATCH -N 2-4 --begin=now+1hour --deadline=2030-01-01T00:00:00 --time-min=10
#SBATCH --gpus=a100:2 --gpus-per-task=1 --cpus-per-gpu=4 --mem-per-gpu=8G
#SBATCH -w n[1-3] -x n4 -C "a&b|c" -d afterok:1:2 -L lic:2 --wckey=w
