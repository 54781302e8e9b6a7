#!/bin/bash

#SBATCH --gres=gpu:1

module load python/3.10

srun python train.py
