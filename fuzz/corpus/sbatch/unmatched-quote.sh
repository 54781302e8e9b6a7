#!/bin/sh
#SBATCH --account="unterminated
