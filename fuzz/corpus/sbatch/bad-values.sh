#!/bin/sh
#SBATCH -n x --time=abc
