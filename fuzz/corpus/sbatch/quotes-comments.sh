#!/bin/bash
#SBATCH --job-name="my job" # comment
#SBATCH -o 'out put'#x
#SBATCH --comment=a\"b"c d"e
  #SBATCH --partition=indented

# plain comment
#SBATCH --account=acct1
echo hi
#SBATCH --ntasks=9
