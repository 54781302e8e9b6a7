/*
 * loom_sweep.h - `loom sweep`: a parameter grid or table run as one job array
 * (issue 6, "Beyond Slurm").
 *
 *   loom sweep [sbatch options] NAME=v1,v2,... [NAME=...] [--] COMMAND [ARGS]
 *   loom sweep [sbatch options] --file rows.csv|rows.json [--] COMMAND [ARGS]
 *   loom sweep [...] --throttle N | --dry-run
 *   loom sweep status ID [--json]
 *
 * A grid is every combination of the values (the first name varies slowest);
 * a CSV file is a header of names and one row per task; a JSON file is a
 * list of objects (one per task) or an object of lists (a grid). Task i gets
 * row i as arguments appended to the command ("--lr=1e-3 --bs=16") and as
 * environment variables (LOOM_PARAM_LR=1e-3, names upper-cased, other
 * characters as '_'), plus LOOM_SWEEP_PARAMS with all of them. COMMAND is a
 * program, or a batch script: a sh/bash script has the parameter block put
 * after its #SBATCH header, any other script is run by a small sh wrapper
 * that keeps its #SBATCH lines. The array is submitted with the real sbatch
 * (--array=0-(N-1), %N from --throttle), so every sbatch option works, and
 * the table is kept in the state directory (loom_submit.h) for `status`,
 * which shows parameters against state, exit code and elapsed time.
 */
#ifndef LOOM_CLI_LOOM_SWEEP_H
#define LOOM_CLI_LOOM_SWEEP_H

int loom_sweep_main(int argc, char **argv);

#endif
