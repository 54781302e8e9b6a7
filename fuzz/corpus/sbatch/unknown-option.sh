#!/bin/sh
#SBATCH --bogus
