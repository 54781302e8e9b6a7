#!/bin/sh
#SBATCH --mem=1G --mem-per-cpu=2G
