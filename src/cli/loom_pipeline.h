/*
 * loom_pipeline.h - `loom pipeline`: named steps with their own resources
 * and dependencies, submitted atomically as dependent jobs, shown and
 * cancelled as one (issue 6, "Beyond Slurm"; seed 002's missing feature).
 *
 *   loom pipeline [--dry-run] [--parsable] FILE.json
 *   loom pipeline status NAME-OR-ID [--json]
 *   loom pipeline cancel NAME-OR-ID
 *
 * The file (JSON, parsed with jansson):
 *   {"name": "demo",
 *    "defaults": {"partition": "debug", "time": "00:10:00"},
 *    "steps": [
 *      {"name": "prep", "cpus-per-task": 2, "command": "python3 prep.py"},
 *      {"name": "train", "nodes": 2, "gpus-per-node": 2, "depends_on": ["prep"],
 *       "script": "train.sh", "args": ["--epochs", "3"]},
 *      {"name": "eval", "depends_on": "train", "after": "ok", "command": ["python3", "eval.py"],
 *       "env": {"MODEL": "out/model.json"}}]}
 * Every other key of a step is an sbatch long option ('_' may stand for
 * '-'; true is a flag, false leaves it out). `after` is ok (default), any or
 * notok. `steps` may also be an object of name -> step. Scripts are found
 * beside the file, and jobs run there unless a step sets chdir.
 *
 * Everything is checked before anything is submitted: names, options,
 * scripts, the dependency graph (no unknown step, no cycle). Steps go to the
 * real sbatch in dependency order, named "<pipeline>.<step>", with
 * --dependency=after<kind>:<ids> and --kill-on-invalid-dep=yes (a failed
 * step cancels what waits for it); when one submission fails the jobs
 * already made are cancelled. The steps and their job ids are kept in the
 * state directory (loom_submit.h) under the id of the first job.
 */
#ifndef LOOM_CLI_LOOM_PIPELINE_H
#define LOOM_CLI_LOOM_PIPELINE_H

int loom_pipeline_main(int argc, char **argv);

#endif
