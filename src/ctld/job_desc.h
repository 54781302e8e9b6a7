/*
 * job_desc.h - a job from its description: defaults, validation with Slurm's
 * errors, and the scheduling request (messages.md §2; CLI_SPEC §1, §0.10).
 *
 * Defaults (as slurmctld fills them): partition = the Default=YES one; time
 * limit = the partition's DefaultTime, else its MaxTime; nodes = 1 (up to the
 * partition's nodes when -N was not given); tasks = one per node (or
 * ntasks_per_node per node); memory = --mem / --mem-per-cpu, else the
 * partition's then the cluster's DefMemPerCPU/DefMemPerNode, else the whole
 * node (tracked only with SelectTypeParameters=CR_*_Memory).
 *
 * Rejections (the job is not created), as slurmctld 22.05 answers them:
 *   unknown partition, or none and no default   LOOM_EINVAL_PARTITION
 *   CPUs, memory, GPUs no node could ever give   LOOM_ENODE_CONFIG ("CPU count
 *     per node can not be satisfied" / "Memory specification can not be satisfied")
 *   a GRES not in GresTypes, a bad --gres text   LOOM_EINVAL_GRES
 *   a constraint no node of the partition meets  LOOM_ECONSTRAINT
 *   an unknown node in --nodelist/--exclude      LOOM_EINVAL_NODENAME
 *   a malformed --dependency                     LOOM_EINVAL_DEPEND (job_depend.h)
 *   --array beyond MaxArraySize - 1              LOOM_EINVAL_ARRAY (job_array.h)
 * Over the partition's MaxTime, MaxNodes, node count or total CPUs: with
 * EnforcePartLimits rejected (LOOM_EINVAL_TIME, LOOM_EINVAL_NODECOUNT,
 * LOOM_ETOO_MANY_CPUS); without (the default) accepted, pending with reason
 * PartitionTimeLimit, PartitionNodeLimit or PartitionConfig, as real Slurm
 * does ("sbatch -N 3" on two nodes pends).
 *
 * Entry points: ctld_job_from_submit, ctld_job_build_req, ctld_job_check_fit,
 * ctld_job_limit_reason, ctld_uid_name, ctld_gid_name.
 */
#ifndef LOOM_CTLD_JOB_DESC_H
#define LOOM_CTLD_JOB_DESC_H

#include "ctld/ctld.h"

/* A new job (not in the table, id 0) from a job.submit description. */
int ctld_job_from_submit(ctld_t *c, const json_t *desc, const char *script, const ctld_peer_t *peer,
                         int64_t now, ctld_job_t **out, loom_err_t *err);

/* (Re)build job->req, its GRES list, node masks and required nodes from the
 * job's fields. Errors as above (unknown node, bad GRES, bad constraint). */
int ctld_job_build_req(ctld_t *c, ctld_job_t *job, loom_err_t *err);

/* Could the partition's nodes ever run it (ignoring what is in use and node
 * states)? LOOM_EINVAL_NODECOUNT or LOOM_ENODE_CONFIG otherwise; with
 * EnforcePartLimits also the partition limits. */
int ctld_job_check_fit(ctld_t *c, ctld_job_t *job, loom_err_t *err);

/* The pending reason a partition limit imposes (PartitionTimeLimit,
 * PartitionNodeLimit, PartitionDown, PartitionInactive) or NULL. */
const char *ctld_job_limit_reason(const ctld_t *c, const ctld_job_t *job);

/* User and group names ("uid" / "gid" as text when unknown); malloc'd. */
char *ctld_uid_name(uint32_t uid);
char *ctld_gid_name(uint32_t gid);

#endif
