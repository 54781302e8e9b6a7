#!/bin/sh
#SBATCH -n 2
hostname
