/*
 * sacct_json.h - `sacct --json` in Slurm 22.05's layout (CLI_SPEC §8):
 * the openapi/dbv0.0.38 plugin's job and step dump, from loomdbd's job and
 * step records (docs/proto/messages.md §1, §6.1).
 *
 * The document is {"meta": {"plugin", "Slurm"}, "errors": [], "jobs": [...]}
 * printed as Slurm's JSON serializer does (two-space indent, "\/" for "/",
 * empty lists on two lines, no final newline). Member names, nesting, order
 * and types follow sacct 22.05.8's output (checked against the real binary
 * and src/plugins/openapi/dbv0.0.38/parse.c; tests/integration/dbd_expected/
 * sacct_json_skeleton.json). Its quirks are kept: an exit status that is a
 * normal exit reads {"status": "SUCCESS", "return_code": 0} whatever the
 * code, a signal gives "SIGNALED" with a null return_code; reservation/name
 * is the number 0. What Loom does not record gets Slurm's empty value:
 * comment members null, container null, het {0, null}, mcs/label "", time/suspended
 * and the job's own CPU times 0, step pid null, energy and CPU frequency 0.
 *
 * Entry points: loom_sacct_json_job, loom_sacct_json_step,
 * loom_sacct_json_print, loom_sacct_json_dump.
 */
#ifndef LOOM_CLI_SACCT_JSON_H
#define LOOM_CLI_SACCT_JSON_H

#include "common/conf.h"
#include "common/sbuf.h"

#include <jansson.h>
#include <time.h>

typedef struct loom_sacct_json {
    const loom_conf_t *conf; /* AccountingStorageTRES gives gres TRES ids; may be NULL */
    time_t now;              /* elapsed of jobs still running */
} loom_sacct_json_t;

/* One job (a loomdbd job record) without its steps: "steps" is []. New reference. */
json_t *loom_sacct_json_job(const json_t *job, const loom_sacct_json_t *ctx);
/* One step record of job, for the job's "steps" list. New reference. */
json_t *loom_sacct_json_step(const json_t *job, const json_t *step, const loom_sacct_json_t *ctx);
/* Append the whole document for jobs (an array of loom_sacct_json_job
 * results, stolen; none adds Slurm's "Nothing found" error) to out. */
void loom_sacct_json_print(json_t *jobs, loom_sbuf_t *out);
/* Append v as Slurm's serializer prints it (depth: indent level of v). */
void loom_sacct_json_dump(const json_t *v, int depth, loom_sbuf_t *out);

#endif
