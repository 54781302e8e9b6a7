#!/bin/sh
#SBATCH --export=ALL,A=1,HOME --chdir=rel -w /etc/hostname -H -vv
