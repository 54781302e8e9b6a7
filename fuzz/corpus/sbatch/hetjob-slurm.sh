#!/bin/sh
#SBATCH -n 1
#SBATCH hetjob
#SBATCH -n 2
#SLURM -J old
