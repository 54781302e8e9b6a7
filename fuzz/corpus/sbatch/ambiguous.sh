#!/bin/sh
#SBATCH --nod=2
#SBATCH -J
