/*
 * conf_keys.c - the slurm.conf key table and the typed value conversions.
 * See conf_keys.h; CLI_SPEC §13. Defaults are those of Slurm 22.05 (checked
 * against `scontrol show config` of a real 22.05 slurmctld), except
 * SelectType, whose default is select/cons_tres as CLI_SPEC §13 asks.
 */
#include "common/conf_keys.h"
#include "common/conf.h"
#include "common/gres.h"
#include "common/hostlist.h"
#include "common/memsize.h"
#include "common/strv.h"
#include "common/timefmt.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- word lists ---------------------------------------------------------- */

static const loom_conf_word_t conf_keys_node_states[] = {
    {"UNKNOWN", LOOM_CONF_NODE_UNKNOWN}, {"CLOUD", LOOM_CONF_NODE_CLOUD},
    {"DOWN", LOOM_CONF_NODE_DOWN},       {"DRAIN", LOOM_CONF_NODE_DRAIN},
    {"FAIL", LOOM_CONF_NODE_FAIL},       {"FAILING", LOOM_CONF_NODE_FAILING},
    {"FUTURE", LOOM_CONF_NODE_FUTURE},   {NULL, 0},
};

static const loom_conf_word_t conf_keys_part_states[] = {
    {"UP", LOOM_CONF_PART_UP},
    {"DOWN", LOOM_CONF_PART_DOWN},
    {"DRAIN", LOOM_CONF_PART_DRAIN},
    {"INACTIVE", LOOM_CONF_PART_INACTIVE},
    {NULL, 0},
};

/* Printed in this order ("GANG,SUSPEND" as Slurm prints it). */
static const loom_conf_word_t conf_keys_preempt[] = {
    {"OFF", LOOM_PREEMPT_OFF},
    {"GANG", LOOM_PREEMPT_GANG},
    {"CANCEL", LOOM_PREEMPT_CANCEL},
    {"REQUEUE", LOOM_PREEMPT_REQUEUE},
    {"SUSPEND", LOOM_PREEMPT_SUSPEND},
    {"WITHIN", LOOM_PREEMPT_WITHIN},
    {NULL, 0},
};

/* Combined words first, so that printing prefers them. */
static const loom_conf_word_t conf_keys_cr[] = {
    {"CR_CPU_Memory", LOOM_CR_CPU | LOOM_CR_MEMORY},
    {"CR_Core_Memory", LOOM_CR_CORE | LOOM_CR_MEMORY},
    {"CR_Socket_Memory", LOOM_CR_SOCKET | LOOM_CR_MEMORY},
    {"CR_CPU", LOOM_CR_CPU},
    {"CR_Core", LOOM_CR_CORE},
    {"CR_Socket", LOOM_CR_SOCKET},
    {"CR_Memory", LOOM_CR_MEMORY},
    {"CR_ONE_TASK_PER_CORE", LOOM_CR_ONE_TASK_PER_CORE},
    {"CR_CORE_DEFAULT_DIST_BLOCK", LOOM_CR_CORE_DEFAULT_DIST_BLOCK},
    {"CR_LLN", LOOM_CR_LLN},
    {"CR_Pack_Nodes", LOOM_CR_PACK_NODES},
    {"OTHER_CONS_RES", LOOM_CR_OTHER_CONS_RES},
    {"OTHER_CONS_TRES", LOOM_CR_OTHER_CONS_TRES},
    {"NHC_NO", LOOM_CR_NHC_NO},
    {"NHC_NO_STEPS", LOOM_CR_NHC_NO_STEPS},
    {"LL_SHARED_GRES", LOOM_CR_LL_SHARED_GRES},
    {"MULTIPLE_SHARING_GRES_PJ", LOOM_CR_MULTIPLE_SHARING_GRES_PJ},
    {"ENFORCE_BINDING_GRES", LOOM_CR_ENFORCE_BINDING_GRES},
    {"ONE_TASK_PER_SHARING_GRES", LOOM_CR_ONE_TASK_PER_SHARING_GRES},
    {NULL, 0},
};

/* Single bits first: "all" is then never printed (its bits are covered). The
 * implications (limits -> associations, ...) are applied by conf.c. */
static const loom_conf_word_t conf_keys_enforce[] = {
    {"none", 0},
    {"associations", LOOM_ENFORCE_ASSOCS},
    {"limits", LOOM_ENFORCE_LIMITS},
    {"nojobs", LOOM_ENFORCE_NOJOBS},
    {"nosteps", LOOM_ENFORCE_NOSTEPS},
    {"qos", LOOM_ENFORCE_QOS},
    {"safe", LOOM_ENFORCE_SAFE},
    {"wckeys", LOOM_ENFORCE_WCKEYS},
    {"all", LOOM_ENFORCE_ASSOCS | LOOM_ENFORCE_LIMITS | LOOM_ENFORCE_QOS | LOOM_ENFORCE_SAFE |
                LOOM_ENFORCE_WCKEYS},
    {NULL, 0},
};

static const loom_conf_word_t conf_keys_part_limits[] = {
    {"NO", LOOM_PART_LIMITS_NO},
    {"ANY", LOOM_PART_LIMITS_ANY},
    {"ALL", LOOM_PART_LIMITS_ALL},
    {"YES", LOOM_PART_LIMITS_ALL},
    {NULL, 0},
};

/* STR keys with a word list accept only those words (stored as spelt here). */
static const loom_conf_word_t conf_keys_select[] = {
    {"select/cons_tres", 0},
    {"select/cons_res", 0},
    {"select/linear", 0},
    {"select/cray_aries", 0},
    {NULL, 0},
};
static const loom_conf_word_t conf_keys_sched[] = {
    {"sched/backfill", 0},
    {"sched/builtin", 0},
    {NULL, 0},
};
static const loom_conf_word_t conf_keys_prio[] = {
    {"priority/basic", 0},
    {"priority/multifactor", 0},
    {NULL, 0},
};
static const loom_conf_word_t conf_keys_preempt_type[] = {
    {"preempt/none", 0},
    {"preempt/partition_prio", 0},
    {"preempt/qos", 0},
    {NULL, 0},
};
static const loom_conf_word_t conf_keys_reset[] = {
    {"NONE", 0},    {"NOW", 0},       {"DAILY", 0},  {"WEEKLY", 0},
    {"MONTHLY", 0}, {"QUARTERLY", 0}, {"YEARLY", 0}, {NULL, 0},
};
static const loom_conf_word_t conf_keys_debug[] = {
    {"quiet", 0},  {"fatal", 0},  {"error", 0},  {"info", 0},   {"verbose", 0}, {"debug", 0},
    {"debug2", 0}, {"debug3", 0}, {"debug4", 0}, {"debug5", 0}, {NULL, 0},
};

/* ---- the table ----------------------------------------------------------- */

#define NF     LOOM_CONF_NOFIELD
#define G(f)   offsetof(loom_conf_t, f)
#define N(f)   offsetof(loom_conf_nodecfg_t, f)
#define P(f)   offsetof(loom_conf_part_t, f)
#define U32MAX ((int64_t)UINT32_MAX)
#define U16MAX ((int64_t)65533)

#define IG    LOOM_CKF_IGNORED
#define NP    LOOM_CKF_NOPRINT
#define RL    LOOM_CKF_RELOAD
#define INF   LOOM_CKF_INF
#define INFT  (LOOM_CKF_INF | LOOM_CKF_INF_TEXT)
#define MF    LOOM_CKF_MF
#define IFSET LOOM_CKF_IFSET

/* Global keys: name, type, flags, default, min, max, field, words, unit. */
#define GK(n, t, fl, d, lo, hi, f, w, u)                                                           \
    {                                                                                              \
        n, LOOM_CS_GLOBAL, t, fl, d, lo, hi, f, w, u, NULL                                         \
    }
#define GS(n, fl, d, f)            GK(n, LOOM_CT_STR, fl, d, 0, 0, f, NULL, NULL)
#define GW(n, fl, d, f, w)         GK(n, LOOM_CT_STR, fl, d, 0, 0, f, w, NULL)
#define GI(n, fl, d, lo, hi, f, u) GK(n, LOOM_CT_INT, fl, d, lo, hi, f, NULL, u)
#define GB(n, fl, d, f)            GK(n, LOOM_CT_BOOL, fl, d, 0, 0, f, NULL, NULL)
#define GT(n, fl, d, f)            GK(n, LOOM_CT_TIME, fl, d, 0, INT64_MAX, f, NULL, NULL)
#define GM(n, fl, d, f)            GK(n, LOOM_CT_MEM, fl, d, 0, INT64_MAX, f, NULL, NULL)
#define GR(n)                      GK(n, LOOM_CT_RECORD, NP, NULL, 0, 0, NF, NULL, NULL)
/* Record fields: scope, name, type, flags, default, min, max, field, words. */
#define RK(s, n, t, fl, d, lo, hi, f, w)                                                           \
    {                                                                                              \
        n, s, t, fl, d, lo, hi, f, w, NULL, NULL                                                   \
    }
#define ALIAS(s, n, canon)                                                                         \
    {                                                                                              \
        n, s, LOOM_CT_STR, NP, NULL, 0, 0, NF, NULL, NULL, canon                                   \
    }

static const loom_conf_key_t conf_keys_table[] = {
    GS("AccountingStorageBackupHost", 0, NULL, G(accounting_storage_backup_host)),
    GK("AccountingStorageEnforce", LOOM_CT_FLAGS, LOOM_CKF_LOWER, "none", 0, 0,
       G(accounting_storage_enforce), conf_keys_enforce, NULL),
    GS("AccountingStorageHost", 0, "localhost", G(accounting_storage_host)),
    GS("AccountingStorageExternalHost", IG, NULL, NF),
    GS("AccountingStorageParameters", IG, NULL, NF),
    GS("AccountingStoragePass", NP, NULL, G(accounting_storage_pass)),
    GI("AccountingStoragePort", 0, "0", 0, 65535, G(accounting_storage_port), NULL),
    GS("AccountingStorageTRES", 0, "cpu,mem,energy,node,billing,fs/disk,vmem,pages",
       G(accounting_storage_tres)),
    GS("AccountingStorageType", 0, "accounting_storage/none", G(accounting_storage_type)),
    GS("AccountingStorageUser", 0, "root", G(accounting_storage_user)),
    GS("AccountingStoreFlags", IG, NULL, NF),
    GS("AcctGatherEnergyType", IG, "acct_gather_energy/none", NF),
    GS("AcctGatherFilesystemType", IG, "acct_gather_filesystem/none", NF),
    GS("AcctGatherInterconnectType", IG, "acct_gather_interconnect/none", NF),
    GI("AcctGatherNodeFreq", IG, "0", 0, U16MAX, NF, "sec"),
    GS("AcctGatherProfileType", IG, "acct_gather_profile/none", NF),
    GB("AllowSpecResourcesUsage", IG, "NO", NF),
    GS("AuthAltTypes", 0, NULL, G(auth_alt_types)),
    GS("AuthAltParameters", 0, NULL, G(auth_alt_parameters)),
    GS("AuthInfo", IG, NULL, NF),
    GS("AuthType", 0, "auth/munge", G(auth_type)),
    GS("BackupAddr", NP, NULL, NF),
    GS("BackupController", NP, NULL, NF),
    GI("BatchStartTimeout", RL, "10", 0, U16MAX, G(batch_start_timeout), "sec"),
    GS("BcastExclude", IG, "/lib,/usr/lib,/lib64,/usr/lib64", NF),
    GS("BcastParameters", IG, NULL, NF),
    GS("BurstBufferType", IG, NULL, NF),
    GS("CliFilterPlugins", IG, NULL, NF),
    GS("ClusterName", 0, NULL, G(cluster_name)),
    GS("CommunicationParameters", IG, NULL, NF),
    GI("CompleteWait", RL, "0", 0, U16MAX, G(complete_wait), "sec"),
    GS("ControlAddr", NP, NULL, NF),
    GS("ControlMachine", NP, NULL, NF),
    GS("CoreSpecPlugin", IG, "core_spec/none", NF),
    GS("CpuFreqDef", IG, NULL, NF),
    GS("CpuFreqGovernors", IG, "OnDemand,Performance,UserSpace", NF),
    GS("CredType", 0, "cred/munge", G(cred_type)),
    GS("DebugFlags", RL, NULL, G(debug_flags)),
    GI("DefCpuPerGPU", NP, "0", 0, U16MAX, G(def_cpu_per_gpu), NULL),
    GM("DefMemPerCPU", RL | IFSET, "0", G(def_mem_per_cpu)),
    GM("DefMemPerGPU", NP, "0", G(def_mem_per_gpu)),
    GK("DefMemPerNode", LOOM_CT_MEM, RL | INF, "0", 0, INT64_MAX, G(def_mem_per_node), NULL, NULL),
    GS("DependencyParameters", RL, NULL, G(dependency_parameters)),
    GB("DisableRootJobs", RL, "NO", G(disable_root_jobs)),
    GI("EioTimeout", IG, "60", 0, U16MAX, NF, NULL),
    GK("EnforcePartLimits", LOOM_CT_ENUM, RL, "NO", 0, 0, G(enforce_part_limits),
       conf_keys_part_limits, NULL),
    GS("Epilog", RL, NULL, G(epilog)),
    GI("EpilogMsgTime", IG, "2000", 0, U32MAX, NF, "usec"),
    GS("EpilogSlurmctld", RL, NULL, G(epilog_slurmctld)),
    GS("ExtSensorsType", IG, "ext_sensors/none", NF),
    GI("ExtSensorsFreq", IG, "0", 0, U16MAX, NF, "sec"),
    GI("FairShareDampeningFactor", IG | MF, "1", 1, U16MAX, NF, NULL),
    GS("FederationParameters", IG, NULL, NF),
    GI("FirstJobId", RL, "1", 1, 0x3ffffff, G(first_job_id), NULL),
    GI("GetEnvTimeout", IG, "2", 0, U16MAX, NF, "sec"),
    GK("GresTypes", LOOM_CT_LIST, 0, NULL, 0, 0, G(gres_types), NULL, NULL),
    GS("GpuFreqDef", IG, "high,memory=high", NF),
    GI("GroupUpdateForce", IG, "1", 0, 1, NF, NULL),
    GI("GroupUpdateTime", IG, "600", 0, U16MAX, NF, "sec"),
    GI("HealthCheckInterval", RL, "0", 0, U32MAX, G(health_check_interval), "sec"),
    GS("HealthCheckNodeState", RL, "ANY", G(health_check_node_state)),
    GS("HealthCheckProgram", RL, NULL, G(health_check_program)),
    GI("InactiveLimit", RL, "0", 0, U16MAX, G(inactive_limit), "sec"),
    GS("InteractiveStepOptions", 0, "--interactive --preserve-env --pty $SHELL", NF),
    GS("JobAcctGatherFrequency", RL, "30", G(job_acct_gather_frequency)),
    GS("JobAcctGatherType", 0, "jobacct_gather/none", G(job_acct_gather_type)),
    GS("JobAcctGatherParams", IG, NULL, NF),
    GS("JobCompHost", IG, "localhost", NF),
    GS("JobCompLoc", 0, "/var/log/slurm_jobcomp.log", G(job_comp_loc)),
    GS("JobCompParams", IG | NP, NULL, NF),
    GS("JobCompPass", IG | NP, NULL, NF),
    GI("JobCompPort", IG, "0", 0, 65535, NF, NULL),
    GS("JobCompType", 0, "jobcomp/none", G(job_comp_type)),
    GS("JobCompUser", IG, "root", NF),
    GS("JobContainerType", IG, "job_container/none", NF),
    GS("JobCredentialPrivateKey", IG, NULL, NF),
    GS("JobCredentialPublicCertificate", IG, NULL, NF),
    GI("JobFileAppend", IG, "0", 0, 1, NF, NULL),
    GI("JobRequeue", RL, "1", 0, 1, G(job_requeue), NULL),
    GS("JobSubmitPlugins", 0, NULL, G(job_submit_plugins)),
    GI("KillOnBadExit", RL, "0", 0, 1, G(kill_on_bad_exit), NULL),
    GI("KillWait", RL, "30", 0, U16MAX, G(kill_wait), "sec"),
    GS("LaunchParameters", RL, NULL, G(launch_parameters)),
    GS("LaunchType", IG, "launch/slurm", NF),
    GS("Licenses", 0, NULL, G(licenses)),
    GS("LogTimeFormat", IG, "iso8601_ms", NF),
    GS("MailDomain", RL, NULL, G(mail_domain)),
    GS("MailProg", RL, "/bin/mail", G(mail_prog)),
    GI("MaxArraySize", 0, "1001", 0, 4000001, G(max_array_size), NULL),
    GI("MaxDBDMsgs", IG, "0", 0, U32MAX, NF, NULL),
    GI("MaxJobCount", 0, "10000", 1, U32MAX, G(max_job_count), NULL),
    GI("MaxJobId", 0, "67043328", 1, 0x3ffffff, G(max_job_id), NULL),
    GM("MaxMemPerCPU", RL | IFSET, "0", G(max_mem_per_cpu)),
    GK("MaxMemPerNode", LOOM_CT_MEM, RL | INF, "0", 0, INT64_MAX, G(max_mem_per_node), NULL, NULL),
    GI("MaxNodeCount", IG, NULL, 0, U32MAX, NF, NULL),
    GI("MaxStepCount", RL, "40000", 1, U32MAX, G(max_step_count), NULL),
    GI("MaxTasksPerNode", RL, "512", 1, U16MAX, G(max_tasks_per_node), NULL),
    GS("MCSPlugin", IG, "mcs/none", NF),
    GS("MCSParameters", IG, NULL, NF),
    GI("MessageTimeout", RL, "10", 1, U16MAX, G(message_timeout), "sec"),
    GI("MinJobAge", RL, "300", 0, U32MAX, G(min_job_age), "sec"),
    GS("MpiDefault", 0, "none", G(mpi_default)),
    GS("MpiParams", IG, NULL, NF),
    GS("NodeFeaturesPlugins", IG, NULL, NF),
    GI("OverTimeLimit", RL | INF, "0", 0, U16MAX, G(over_time_limit), "min"),
    GS("PluginDir", IG, NULL, G(plugin_dir)),
    GS("PlugStackConfig", IG, NULL, NF),
    GS("PowerParameters", IG, NULL, NF),
    GS("PowerPlugin", IG, NULL, NF),
    GK("PreemptMode", LOOM_CT_FLAGS, 0, "OFF", 0, 0, G(preempt_mode), conf_keys_preempt, NULL),
    GS("PreemptParameters", IG | NP, NULL, NF),
    GW("PreemptType", 0, "preempt/none", G(preempt_type), conf_keys_preempt_type),
    GT("PreemptExemptTime", RL, "0", G(preempt_exempt_time)),
    GS("PrEpParameters", IG, NULL, NF),
    GS("PrEpPlugins", IG, "prep/script", NF),
    GS("PriorityParameters", IG, NULL, NF),
    GS("PrioritySiteFactorParameters", IG, NULL, NF),
    GS("PrioritySiteFactorPlugin", IG, NULL, NF),
    GT("PriorityDecayHalfLife", RL | MF, "7-0", G(priority_decay_half_life)),
    GT("PriorityCalcPeriod", RL | MF, "5", G(priority_calc_period)),
    GB("PriorityFavorSmall", RL | MF, "NO", G(priority_favor_small)),
    GS("PriorityFlags", RL | MF, NULL, G(priority_flags)),
    GT("PriorityMaxAge", RL | MF, "7-0", G(priority_max_age)),
    GW("PriorityUsageResetPeriod", RL | MF, "NONE", G(priority_usage_reset_period),
       conf_keys_reset),
    GW("PriorityType", 0, "priority/basic", G(priority_type), conf_keys_prio),
    GI("PriorityWeightAge", RL | MF, "0", 0, U32MAX, G(priority_weight_age), NULL),
    GI("PriorityWeightAssoc", RL | MF, "0", 0, U32MAX, G(priority_weight_assoc), NULL),
    GI("PriorityWeightFairShare", RL | MF, "0", 0, U32MAX, G(priority_weight_fairshare), NULL),
    GI("PriorityWeightJobSize", RL | MF, "0", 0, U32MAX, G(priority_weight_job_size), NULL),
    GI("PriorityWeightPartition", RL | MF, "0", 0, U32MAX, G(priority_weight_partition), NULL),
    GI("PriorityWeightQOS", RL | MF, "0", 0, U32MAX, G(priority_weight_qos), NULL),
    GS("PriorityWeightTRES", RL | MF, NULL, G(priority_weight_tres)),
    GS("PrivateData", RL, "none", NF),
    GS("ProctrackType", 0, "proctrack/cgroup", G(proctrack_type)),
    GS("Prolog", RL, NULL, G(prolog)),
    GI("PrologEpilogTimeout", RL, "65534", 0, 65534, G(prolog_epilog_timeout), NULL),
    GS("PrologSlurmctld", RL, NULL, G(prolog_slurmctld)),
    GS("PrologFlags", 0, NULL, G(prolog_flags)),
    GI("PropagatePrioProcess", IG, "0", 0, 2, NF, NULL),
    GS("PropagateResourceLimits", 0, "ALL", G(propagate_rlimits)),
    GS("PropagateResourceLimitsExcept", 0, NULL, G(propagate_rlimits_except)),
    GS("RebootProgram", IG, NULL, NF),
    GS("ReconfigFlags", IG, NULL, NF),
    GS("RequeueExit", IG, NULL, NF),
    GS("RequeueExitHold", IG, NULL, NF),
    GS("ResumeFailProgram", IG, NULL, NF),
    GS("ResumeProgram", RL, NULL, G(resume_program)),
    GI("ResumeRate", RL, "300", 0, U16MAX, G(resume_rate), "nodes/min"),
    GI("ResumeTimeout", RL, "60", 0, U16MAX, G(resume_timeout), "sec"),
    GS("ResvEpilog", IG, NULL, NF),
    GI("ResvOverRun", IG | INF, "0", 0, U16MAX, NF, "min"),
    GS("ResvProlog", IG, NULL, NF),
    GI("ReturnToService", RL, "0", 0, 2, G(return_to_service), NULL),
    GS("RoutePlugin", IG, "route/default", NF),
    GS("SchedulerParameters", RL, NULL, G(scheduler_parameters)),
    GI("SchedulerTimeSlice", RL, "30", 5, U16MAX, G(scheduler_time_slice), "sec"),
    GW("SchedulerType", 0, "sched/backfill", G(scheduler_type), conf_keys_sched),
    GS("ScronParameters", IG, NULL, NF),
    GW("SelectType", 0, "select/cons_tres", G(select_type), conf_keys_select),
    GK("SelectTypeParameters", LOOM_CT_FLAGS, IFSET, NULL, 0, 0, G(select_type_parameters),
       conf_keys_cr, NULL),
    GS("SlurmUser", 0, "root", G(slurm_user)),
    GS("SlurmctldAddr", 0, NULL, NF),
    GW("SlurmctldDebug", RL, "info", G(slurmctld_debug), conf_keys_debug),
    GK("SlurmctldHost", LOOM_CT_HOST, LOOM_CKF_REPEAT, NULL, 0, 0, NF, NULL, NULL),
    GS("SlurmctldLogFile", RL, NULL, G(slurmctld_log_file)),
    GK("SlurmctldPort", LOOM_CT_PORTS, 0, "6817", 1, 65535, NF, NULL, NULL),
    GS("SlurmctldSyslogDebug", IG, NULL, NF),
    GS("SlurmctldPrimaryOffProg", IG, NULL, NF),
    GS("SlurmctldPrimaryOnProg", IG, NULL, NF),
    GI("SlurmctldTimeout", RL, "120", 0, U16MAX, G(slurmctld_timeout), "sec"),
    GS("SlurmctldParameters", RL, NULL, G(slurmctld_parameters)),
    GW("SlurmdDebug", RL, "info", G(slurmd_debug), conf_keys_debug),
    GS("SlurmdLogFile", RL, NULL, G(slurmd_log_file)),
    GS("SlurmdParameters", 0, NULL, G(slurmd_parameters)),
    GS("SlurmdPidFile", 0, "/var/run/slurmd.pid", G(slurmd_pid_file)),
    GI("SlurmdPort", 0, "6818", 1, 65535, G(slurmd_port), NULL),
    GS("SlurmdSpoolDir", 0, "/var/spool/slurmd", G(slurmd_spool_dir)),
    GS("SlurmdSyslogDebug", IG, NULL, NF),
    GI("SlurmdTimeout", RL, "300", 0, U16MAX, G(slurmd_timeout), "sec"),
    GS("SlurmdUser", 0, "root", G(slurmd_user)),
    GS("SlurmSchedLogFile", IG, NULL, NF),
    GI("SlurmSchedLogLevel", IG, "0", 0, 1, NF, NULL),
    GS("SlurmctldPidFile", 0, "/var/run/slurmctld.pid", G(slurmctld_pid_file)),
    GS("SlurmctldPlugstack", IG, NULL, NF),
    GS("SrunEpilog", RL, NULL, G(srun_epilog)),
    GS("SrunPortRange", IG, "0-0", NF),
    GS("SrunProlog", RL, NULL, G(srun_prolog)),
    GS("StateSaveLocation", 0, "/var/spool", G(state_save_location)),
    GS("SuspendExcNodes", RL, NULL, G(suspend_exc_nodes)),
    GS("SuspendExcParts", RL, NULL, G(suspend_exc_parts)),
    GS("SuspendExcStates", RL | NP, NULL, NF),
    GS("SuspendProgram", RL, NULL, G(suspend_program)),
    GI("SuspendRate", RL, "60", 0, U16MAX, G(suspend_rate), "nodes/min"),
    GK("SuspendTime", LOOM_CT_INT, RL | INFT | LOOM_CKF_NONE, "INFINITE", 0, U32MAX,
       G(suspend_time), NULL, "sec"),
    GI("SuspendTimeout", RL, "30", 0, U16MAX, G(suspend_timeout), "sec"),
    GS("SwitchParameters", IG, NULL, NF),
    GS("SwitchType", IG, "switch/none", NF),
    GS("TaskEpilog", RL, NULL, G(task_epilog)),
    GS("TaskPlugin", 0, "task/none", G(task_plugin)),
    GS("TaskPluginParam", 0, NULL, G(task_plugin_param)),
    GS("TaskProlog", RL, NULL, G(task_prolog)),
    GI("TCPTimeout", RL, "2", 0, U16MAX, G(tcp_timeout), "sec"),
    GS("TmpFS", 0, "/tmp", G(tmp_fs)),
    GS("TopologyParam", IG, NULL, NF),
    GS("TopologyPlugin", 0, "topology/none", G(topology_plugin)),
    GB("TrackWCKey", 0, "NO", G(track_wckey)),
    GI("TreeWidth", RL, "50", 1, U16MAX, G(tree_width), NULL),
    GB("UsePAM", 0, "NO", G(use_pam)),
    GS("UnkillableStepProgram", IG, NULL, NF),
    GI("UnkillableStepTimeout", RL, "60", 0, U16MAX, G(unkillable_step_timeout), "sec"),
    GI("VSizeFactor", IG, "0", 0, U16MAX, NF, "percent"),
    GI("WaitTime", IG, "0", 0, U16MAX, NF, "sec"),
    GS("X11Parameters", IG, NULL, NF),
    /* Record lines (the first key of the line names the record). */
    GR("NodeName"),
    GR("PartitionName"),
    GR("DownNodes"),
    GR("NodeSet"),
    GR("FrontendName"),

    /* NodeName fields. */
    RK(LOOM_CS_NODE, "NodeName", LOOM_CT_RECORD, 0, NULL, 0, 0, N(names), NULL),
    RK(LOOM_CS_NODE, "NodeHostname", LOOM_CT_STR, 0, NULL, 0, 0, N(hostnames), NULL),
    RK(LOOM_CS_NODE, "NodeAddr", LOOM_CT_STR, 0, NULL, 0, 0, N(addrs), NULL),
    RK(LOOM_CS_NODE, "BcastAddr", LOOM_CT_STR, IG, NULL, 0, 0, N(bcast_addrs), NULL),
    RK(LOOM_CS_NODE, "Boards", LOOM_CT_INT, 0, NULL, 1, U16MAX, N(boards), NULL),
    RK(LOOM_CS_NODE, "CoreSpecCount", LOOM_CT_INT, 0, "0", 0, U16MAX, N(core_spec_count), NULL),
    RK(LOOM_CS_NODE, "CoresPerSocket", LOOM_CT_INT, 0, NULL, 1, U16MAX, N(cores_per_socket), NULL),
    RK(LOOM_CS_NODE, "CpuBind", LOOM_CT_STR, 0, NULL, 0, 0, N(cpu_bind), NULL),
    RK(LOOM_CS_NODE, "CPUs", LOOM_CT_INT, 0, NULL, 1, U16MAX, N(cpus), NULL),
    ALIAS(LOOM_CS_NODE, "Procs", "CPUs"),
    RK(LOOM_CS_NODE, "CpuSpecList", LOOM_CT_STR, 0, NULL, 0, 0, N(cpu_spec_list), NULL),
    RK(LOOM_CS_NODE, "Features", LOOM_CT_LIST, 0, NULL, 0, 0, N(features), NULL),
    ALIAS(LOOM_CS_NODE, "Feature", "Features"),
    RK(LOOM_CS_NODE, "Gres", LOOM_CT_GRES, 0, NULL, 0, 0, N(gres_text), NULL),
    RK(LOOM_CS_NODE, "MemSpecLimit", LOOM_CT_MEM, 0, "0", 0, INT64_MAX, N(mem_spec_limit), NULL),
    RK(LOOM_CS_NODE, "Port", LOOM_CT_STR, 0, NULL, 0, 0, N(ports), NULL),
    RK(LOOM_CS_NODE, "RealMemory", LOOM_CT_MEM, 0, "1", 1, INT64_MAX, N(real_memory), NULL),
    RK(LOOM_CS_NODE, "Reason", LOOM_CT_STR, 0, NULL, 0, 0, N(reason), NULL),
    RK(LOOM_CS_NODE, "RestrictedCoresPerGPU", LOOM_CT_INT, IG, "0", 0, U16MAX,
       N(restricted_cores_per_gpu), NULL),
    RK(LOOM_CS_NODE, "Sockets", LOOM_CT_INT, 0, NULL, 1, U16MAX, N(sockets), NULL),
    RK(LOOM_CS_NODE, "SocketsPerBoard", LOOM_CT_INT, 0, NULL, 1, U16MAX, N(sockets_per_board),
       NULL),
    RK(LOOM_CS_NODE, "State", LOOM_CT_ENUM, 0, "UNKNOWN", 0, 0, N(state), conf_keys_node_states),
    RK(LOOM_CS_NODE, "ThreadsPerCore", LOOM_CT_INT, 0, NULL, 1, U16MAX, N(threads_per_core), NULL),
    RK(LOOM_CS_NODE, "TmpDisk", LOOM_CT_MEM, 0, "0", 0, INT64_MAX, N(tmp_disk), NULL),
    RK(LOOM_CS_NODE, "Weight", LOOM_CT_INT, 0, "1", 0, U32MAX - 1, N(weight), NULL),

    /* PartitionName fields. */
    RK(LOOM_CS_PART, "PartitionName", LOOM_CT_RECORD, 0, NULL, 0, 0, P(name), NULL),
    RK(LOOM_CS_PART, "AllocNodes", LOOM_CT_LIST, 0, NULL, 0, 0, P(alloc_nodes), NULL),
    RK(LOOM_CS_PART, "AllowAccounts", LOOM_CT_LIST, 0, NULL, 0, 0, P(allow_accounts), NULL),
    RK(LOOM_CS_PART, "AllowGroups", LOOM_CT_LIST, 0, NULL, 0, 0, P(allow_groups), NULL),
    RK(LOOM_CS_PART, "AllowQos", LOOM_CT_LIST, 0, NULL, 0, 0, P(allow_qos), NULL),
    RK(LOOM_CS_PART, "Alternate", LOOM_CT_STR, 0, NULL, 0, 0, P(alternate), NULL),
    RK(LOOM_CS_PART, "CpuBind", LOOM_CT_STR, 0, NULL, 0, 0, P(cpu_bind), NULL),
    RK(LOOM_CS_PART, "Default", LOOM_CT_BOOL, 0, "NO", 0, 0, P(is_default), NULL),
    RK(LOOM_CS_PART, "DefaultTime", LOOM_CT_TIME, INF | LOOM_CKF_NONE, NULL, 0, INT64_MAX,
       P(default_time), NULL),
    RK(LOOM_CS_PART, "DefCpuPerGPU", LOOM_CT_INT, 0, "0", 0, U16MAX, P(def_cpu_per_gpu), NULL),
    RK(LOOM_CS_PART, "DefMemPerCPU", LOOM_CT_MEM, 0, "0", 0, INT64_MAX, P(def_mem_per_cpu), NULL),
    RK(LOOM_CS_PART, "DefMemPerGPU", LOOM_CT_MEM, 0, "0", 0, INT64_MAX, P(def_mem_per_gpu), NULL),
    RK(LOOM_CS_PART, "DefMemPerNode", LOOM_CT_MEM, INF, "0", 0, INT64_MAX, P(def_mem_per_node),
       NULL),
    RK(LOOM_CS_PART, "DenyAccounts", LOOM_CT_LIST, 0, NULL, 0, 0, P(deny_accounts), NULL),
    RK(LOOM_CS_PART, "DenyQos", LOOM_CT_LIST, 0, NULL, 0, 0, P(deny_qos), NULL),
    RK(LOOM_CS_PART, "DisableRootJobs", LOOM_CT_BOOL, 0, "NO", 0, 0, P(disable_root_jobs), NULL),
    RK(LOOM_CS_PART, "ExclusiveUser", LOOM_CT_BOOL, 0, "NO", 0, 0, P(exclusive_user), NULL),
    RK(LOOM_CS_PART, "GraceTime", LOOM_CT_INT, 0, "0", 0, U32MAX, P(grace_time), NULL),
    RK(LOOM_CS_PART, "Hidden", LOOM_CT_BOOL, 0, "NO", 0, 0, P(hidden), NULL),
    RK(LOOM_CS_PART, "LLN", LOOM_CT_BOOL, 0, "NO", 0, 0, P(lln), NULL),
    RK(LOOM_CS_PART, "MaxCPUsPerNode", LOOM_CT_INT, INF, "UNLIMITED", 0, U32MAX,
       P(max_cpus_per_node), NULL),
    RK(LOOM_CS_PART, "MaxMemPerCPU", LOOM_CT_MEM, 0, "0", 0, INT64_MAX, P(max_mem_per_cpu), NULL),
    RK(LOOM_CS_PART, "MaxMemPerNode", LOOM_CT_MEM, INF, "0", 0, INT64_MAX, P(max_mem_per_node),
       NULL),
    RK(LOOM_CS_PART, "MaxNodes", LOOM_CT_INT, INF, "UNLIMITED", 0, U32MAX, P(max_nodes), NULL),
    RK(LOOM_CS_PART, "MaxTime", LOOM_CT_TIME, INF, "UNLIMITED", 0, INT64_MAX, P(max_time), NULL),
    RK(LOOM_CS_PART, "MinNodes", LOOM_CT_INT, 0, "0", 0, U32MAX, P(min_nodes), NULL),
    RK(LOOM_CS_PART, "Nodes", LOOM_CT_STR, 0, NULL, 0, 0, P(nodes), NULL),
    RK(LOOM_CS_PART, "OverSubscribe", LOOM_CT_OVERSUB, 0, "NO", 0, 0, NF, NULL),
    ALIAS(LOOM_CS_PART, "Shared", "OverSubscribe"),
    RK(LOOM_CS_PART, "OverTimeLimit", LOOM_CT_INT, INF | LOOM_CKF_NONE, NULL, 0, U16MAX,
       P(over_time_limit), NULL),
    RK(LOOM_CS_PART, "PreemptMode", LOOM_CT_FLAGS, 0, NULL, 0, 0, P(preempt_mode),
       conf_keys_preempt),
    RK(LOOM_CS_PART, "PriorityJobFactor", LOOM_CT_INT, 0, "1", 0, U16MAX, P(priority_job_factor),
       NULL),
    RK(LOOM_CS_PART, "PriorityTier", LOOM_CT_INT, 0, "1", 0, U16MAX, P(priority_tier), NULL),
    RK(LOOM_CS_PART, "QOS", LOOM_CT_STR, 0, NULL, 0, 0, P(qos), NULL),
    RK(LOOM_CS_PART, "ReqResv", LOOM_CT_BOOL, 0, "NO", 0, 0, P(req_resv), NULL),
    RK(LOOM_CS_PART, "ResumeTimeout", LOOM_CT_INT, INF | LOOM_CKF_NONE, NULL, 0, U16MAX,
       P(resume_timeout), NULL),
    RK(LOOM_CS_PART, "RootOnly", LOOM_CT_BOOL, 0, "NO", 0, 0, P(root_only), NULL),
    RK(LOOM_CS_PART, "SelectTypeParameters", LOOM_CT_STR, 0, NULL, 0, 0, P(select_type_parameters),
       NULL),
    RK(LOOM_CS_PART, "State", LOOM_CT_ENUM, 0, "UP", 0, 0, P(state), conf_keys_part_states),
    RK(LOOM_CS_PART, "SuspendTime", LOOM_CT_INT, INF | LOOM_CKF_NONE, NULL, 0, U32MAX,
       P(suspend_time), NULL),
    RK(LOOM_CS_PART, "SuspendTimeout", LOOM_CT_INT, INF | LOOM_CKF_NONE, NULL, 0, U16MAX,
       P(suspend_timeout), NULL),
    RK(LOOM_CS_PART, "TRESBillingWeights", LOOM_CT_STR, 0, NULL, 0, 0, P(tres_billing_weights),
       NULL),

    /* DownNodes, NodeSet, FrontendName fields. */
    RK(LOOM_CS_DOWN, "DownNodes", LOOM_CT_RECORD, 0, NULL, 0, 0, offsetof(loom_conf_down_t, names),
       NULL),
    RK(LOOM_CS_DOWN, "Reason", LOOM_CT_STR, 0, NULL, 0, 0, offsetof(loom_conf_down_t, reason),
       NULL),
    RK(LOOM_CS_DOWN, "State", LOOM_CT_ENUM, 0, "DOWN", 0, 0, offsetof(loom_conf_down_t, state),
       conf_keys_node_states),
    RK(LOOM_CS_NODESET, "NodeSet", LOOM_CT_RECORD, 0, NULL, 0, 0,
       offsetof(loom_conf_nodeset_t, name), NULL),
    RK(LOOM_CS_NODESET, "Nodes", LOOM_CT_STR, 0, NULL, 0, 0, offsetof(loom_conf_nodeset_t, nodes),
       NULL),
    RK(LOOM_CS_NODESET, "Feature", LOOM_CT_STR, 0, NULL, 0, 0,
       offsetof(loom_conf_nodeset_t, feature), NULL),
    RK(LOOM_CS_FRONTEND, "FrontendName", LOOM_CT_RECORD, IG, NULL, 0, 0, NF, NULL),
    RK(LOOM_CS_FRONTEND, "FrontendAddr", LOOM_CT_STR, IG, NULL, 0, 0, NF, NULL),
    RK(LOOM_CS_FRONTEND, "Port", LOOM_CT_INT, IG, NULL, 1, 65535, NF, NULL),
    RK(LOOM_CS_FRONTEND, "Reason", LOOM_CT_STR, IG, NULL, 0, 0, NF, NULL),
    RK(LOOM_CS_FRONTEND, "State", LOOM_CT_STR, IG, NULL, 0, 0, NF, NULL),
    RK(LOOM_CS_FRONTEND, "AllowGroups", LOOM_CT_STR, IG, NULL, 0, 0, NF, NULL),
    RK(LOOM_CS_FRONTEND, "AllowUsers", LOOM_CT_STR, IG, NULL, 0, 0, NF, NULL),
    RK(LOOM_CS_FRONTEND, "DenyGroups", LOOM_CT_STR, IG, NULL, 0, 0, NF, NULL),
    RK(LOOM_CS_FRONTEND, "DenyUsers", LOOM_CT_STR, IG, NULL, 0, 0, NF, NULL),
};

#define CONF_KEYS_N (sizeof(conf_keys_table) / sizeof(conf_keys_table[0]))

size_t loom_conf_key_count(void)
{
    return CONF_KEYS_N;
}

const loom_conf_key_t *loom_conf_key_at(size_t i)
{
    return i < CONF_KEYS_N ? &conf_keys_table[i] : NULL;
}

size_t loom_conf_key_index(const loom_conf_key_t *k)
{
    return (size_t)(k - conf_keys_table);
}

/* A linear scan of ~330 keys for each slurm.conf line and each lookup: the
 * first letter is compared before strcasecmp (which was a quarter of a
 * squeue's instructions). */
static const loom_conf_key_t *conf_keys_lookup(loom_conf_scope_t scope, const char *name)
{
    int first = tolower((unsigned char)name[0]);
    for (size_t i = 0; i < CONF_KEYS_N; i++)
        if (conf_keys_table[i].scope == scope &&
            tolower((unsigned char)conf_keys_table[i].name[0]) == first &&
            strcasecmp(conf_keys_table[i].name, name) == 0)
            return &conf_keys_table[i];
    return NULL;
}

const loom_conf_key_t *loom_conf_key_find(loom_conf_scope_t scope, const char *name)
{
    const loom_conf_key_t *k = conf_keys_lookup(scope, name);
    if (k && k->alias_of)
        k = conf_keys_lookup(scope, k->alias_of);
    return k;
}

/* Optimal string alignment distance, case-insensitive, capped at cap+1. */
static size_t conf_keys_distance(const char *a, const char *b, size_t cap)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64 || (la > lb ? la - lb : lb - la) > cap)
        return cap + 1;
    size_t d[65][65];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            size_t best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best)
                best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 &&
                tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1]) &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb];
}

const char *loom_conf_key_suggest(loom_conf_scope_t scope, const char *name)
{
    const char *best = NULL;
    size_t best_d = 3;
    for (size_t i = 0; i < CONF_KEYS_N; i++) {
        const loom_conf_key_t *k = &conf_keys_table[i];
        if (k->scope != scope)
            continue;
        size_t d = conf_keys_distance(name, k->name, best_d - 1);
        if (d < best_d) {
            best_d = d;
            best = k->alias_of ? k->alias_of : k->name;
        }
    }
    return best;
}

/* ---- value parsers ------------------------------------------------------- */

int loom_conf_parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"yes", "true", "1", "on", "y"};
    static const char *const no[] = {"no", "false", "0", "off", "n"};
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = true;
            return 0;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = false;
            return 0;
        }
    }
    return -LOOM_EPARSE;
}

int loom_conf_parse_int(const char *s, int suffix, int64_t *out)
{
    if (!isdigit((unsigned char)s[0]))
        return -LOOM_EPARSE;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE || v > (unsigned long long)INT64_MAX)
        return -LOOM_ERANGE;
    int shift = 0;
    if (suffix && *end) {
        const char *units = "KMGTP";
        const char *u = strchr(units, toupper((unsigned char)*end));
        if (!u)
            return -LOOM_EPARSE;
        shift = 10 * (int)(u - units + 1);
        end++;
    }
    if (*end)
        return -LOOM_EPARSE;
    if (shift && v > ((unsigned long long)INT64_MAX >> shift))
        return -LOOM_ERANGE;
    *out = (int64_t)(v << shift);
    return 0;
}

static int conf_keys_bad(const loom_conf_key_t *k, const char *value, const char *where,
                         loom_err_t *err, const char *why)
{
    return loom_errf(err, -LOOM_ECONFIG, "invalid %s value '%s'%s%s (%s)", k->name, value,
                     where ? " for " : "", where ? where : "", why);
}

static int conf_keys_infinite(const char *s)
{
    return strcasecmp(s, "UNLIMITED") == 0 || strcasecmp(s, "INFINITE") == 0 ||
           strcmp(s, "-1") == 0;
}

static void *conf_keys_field(const loom_conf_key_t *k, void *record)
{
    return (record && k->off != NF) ? (char *)record + k->off : NULL;
}

static void conf_keys_set_str(const loom_conf_key_t *k, void *record, const char *v)
{
    char **f = conf_keys_field(k, record);
    if (!f)
        return;
    free(*f);
    *f = *v ? loom_xstrdup(v) : NULL;
}

static void conf_keys_set_i64(const loom_conf_key_t *k, void *record, int64_t v)
{
    int64_t *f = conf_keys_field(k, record);
    if (f)
        *f = v;
}

static const char *conf_keys_bounds_msg(const loom_conf_key_t *k, char *buf, size_t n)
{
    snprintf(buf, n, "expected %lld to %lld%s", (long long)k->min, (long long)k->max,
             (k->flags & LOOM_CKF_INF) ? " or UNLIMITED" : "");
    return buf;
}

static int conf_keys_parse_int(const loom_conf_key_t *k, const char *v, const char *where,
                               void *record, loom_err_t *err)
{
    char why[96];
    int64_t n;
    if ((k->flags & LOOM_CKF_INF) && conf_keys_infinite(v))
        n = LOOM_CONF_UNLIMITED;
    else if ((k->flags & LOOM_CKF_NONE) && strcasecmp(v, "NONE") == 0)
        n = LOOM_CONF_NOT_SET;
    else if (loom_conf_parse_int(v, 0, &n) != 0 || n < k->min || n > k->max)
        return conf_keys_bad(k, v, where, err, conf_keys_bounds_msg(k, why, sizeof(why)));
    conf_keys_set_i64(k, record, n);
    return 0;
}

static int conf_keys_parse_time(const loom_conf_key_t *k, const char *v, const char *where,
                                void *record, loom_err_t *err)
{
    int64_t secs;
    if ((k->flags & LOOM_CKF_NONE) && strcasecmp(v, "NONE") == 0)
        secs = LOOM_CONF_NOT_SET;
    else if (loom_time_parse_secs(v, &secs, NULL) != 0 ||
             (secs == LOOM_TIME_INFINITE && !(k->flags & LOOM_CKF_INF)))
        return conf_keys_bad(k, v, where, err,
                             (k->flags & LOOM_CKF_INF)
                                 ? "expected minutes, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED"
                                 : "expected minutes, M:S, H:M:S, D-H, D-H:M or D-H:M:S");
    conf_keys_set_i64(k, record, secs);
    return 0;
}

static int conf_keys_parse_mem(const loom_conf_key_t *k, const char *v, const char *where,
                               void *record, loom_err_t *err)
{
    uint64_t mib;
    int64_t n;
    if ((k->flags & LOOM_CKF_INF) && conf_keys_infinite(v))
        n = LOOM_CONF_UNLIMITED;
    else if (loom_mem_parse_mib(v, &mib, NULL) != 0 || mib > (uint64_t)INT64_MAX ||
             (int64_t)mib < k->min)
        return conf_keys_bad(k, v, where, err,
                             k->min > 0
                                 ? "expected a memory size of at least 1 MiB, e.g. 4096 or 4G"
                                 : "expected a memory size in MiB, e.g. 4096 or 4G");
    else
        n = (int64_t)mib;
    conf_keys_set_i64(k, record, n);
    return 0;
}

static const loom_conf_word_t *conf_keys_word(const loom_conf_word_t *w, const char *s, size_t n)
{
    for (; w->name; w++)
        if (strlen(w->name) == n && strncasecmp(w->name, s, n) == 0)
            return w;
    return NULL;
}

/* "did you mean X" for a misspelt word (bad[0..n)), else the list of words. */
static const char *conf_keys_words_msg(const loom_conf_word_t *w, const char *bad, size_t n,
                                       char *buf, size_t size)
{
    char word[72];
    if (bad && n < sizeof(word)) {
        memcpy(word, bad, n);
        word[n] = '\0';
        for (const loom_conf_word_t *p = w; p->name; p++) {
            if (conf_keys_distance(word, p->name, 2) <= 2) {
                snprintf(buf, size, "did you mean %s?", p->name);
                return buf;
            }
        }
    }
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_add(&sb, "expected one of ");
    for (const loom_conf_word_t *p = w; p->name; p++)
        loom_sbuf_addf(&sb, "%s%s", p == w ? "" : ", ", p->name);
    snprintf(buf, size, "%s", loom_sbuf_str(&sb));
    loom_sbuf_free(&sb);
    return buf;
}

static int conf_keys_parse_words(const loom_conf_key_t *k, const char *v, const char *where,
                                 void *record, loom_err_t *err)
{
    char why[400];
    unsigned acc = 0;
    const char *p = v;
    do {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        const loom_conf_word_t *w = conf_keys_word(k->words, p, n);
        if (!w || (k->type != LOOM_CT_FLAGS && e))
            return conf_keys_bad(k, v, where, err,
                                 conf_keys_words_msg(k->words, w ? NULL : p, n, why, sizeof(why)));
        acc |= w->value;
        if (k->type == LOOM_CT_STR) {
            conf_keys_set_str(k, record, w->name);
            return 0;
        }
        p = e ? e + 1 : NULL;
    } while (p);
    if (k->type == LOOM_CT_ENUM) {
        int *f = conf_keys_field(k, record);
        if (f)
            *f = (int)acc;
    } else {
        unsigned *f = conf_keys_field(k, record);
        if (f)
            *f = acc;
    }
    return 0;
}

static int conf_keys_parse_list(const loom_conf_key_t *k, const char *v, void *record)
{
    loom_strv_t *f = conf_keys_field(k, record);
    if (!f)
        return 0;
    loom_strv_free(f);
    loom_strv_split(f, v, ",");
    return 0;
}

/* "name" or "name(addr)": appended to loom_conf_t.ctld_hosts. */
static int conf_keys_parse_host(const loom_conf_key_t *k, const char *v, const char *where,
                                void *record, loom_err_t *err)
{
    const char *open = strchr(v, '(');
    size_t n = open ? (size_t)(open - v) : strlen(v);
    const char *addr = open ? open + 1 : NULL;
    size_t an = addr ? strlen(addr) : 0;
    if (n == 0 || strpbrk(v, " \t,") || (open && (an < 2 || addr[an - 1] != ')')) ||
        (!open && strchr(v, ')')))
        return conf_keys_bad(k, v, where, err, "expected a host name, optionally with (address)");
    if (open && memchr(addr, '(', an - 1))
        return conf_keys_bad(k, v, where, err, "expected a host name, optionally with (address)");
    loom_conf_t *c = record;
    if (!c)
        return 0;
    c->ctld_hosts = loom_xreallocarray(c->ctld_hosts, c->n_ctld_hosts + 1, sizeof(*c->ctld_hosts));
    loom_conf_host_t *h = &c->ctld_hosts[c->n_ctld_hosts++];
    h->name = loom_xstrndup(v, n);
    h->addr = addr ? loom_xstrndup(addr, an - 1) : loom_xstrdup(h->name);
    return 0;
}

/* "6817" or "6817-6818". */
static int conf_keys_parse_ports(const loom_conf_key_t *k, const char *v, const char *where,
                                 void *record, loom_err_t *err)
{
    const char *dash = strchr(v, '-');
    char lo_s[16] = "";
    int64_t lo, hi;
    if (dash && (size_t)(dash - v) < sizeof(lo_s))
        memcpy(lo_s, v, (size_t)(dash - v));
    if ((dash ? loom_conf_parse_int(lo_s, 0, &lo) != 0 || loom_conf_parse_int(dash + 1, 0, &hi)
              : loom_conf_parse_int(v, 0, &lo)) != 0)
        return conf_keys_bad(k, v, where, err, "expected a port or a range like 6817-6818");
    if (!dash)
        hi = lo;
    if (lo < 1 || hi > 65535 || hi < lo)
        return conf_keys_bad(k, v, where, err, "expected ports from 1 to 65535, low-high");
    loom_conf_t *c = record;
    if (c) {
        c->slurmctld_port = lo;
        c->slurmctld_port_count = hi - lo + 1;
    }
    return 0;
}

/* OverSubscribe: NO | EXCLUSIVE | YES[:n] | FORCE[:n]. */
static int conf_keys_parse_oversub(const loom_conf_key_t *k, const char *v, const char *where,
                                   void *record, loom_err_t *err)
{
    static const loom_conf_word_t modes[] = {
        {"NO", LOOM_CONF_OVERSUB_NO},
        {"EXCLUSIVE", LOOM_CONF_OVERSUB_EXCLUSIVE},
        {"YES", LOOM_CONF_OVERSUB_YES},
        {"FORCE", LOOM_CONF_OVERSUB_FORCE},
        {NULL, 0},
    };
    const char *colon = strchr(v, ':');
    size_t n = colon ? (size_t)(colon - v) : strlen(v);
    const loom_conf_word_t *w = conf_keys_word(modes, v, n);
    int64_t jobs = 4;
    if (!w ||
        (colon && (w->value == LOOM_CONF_OVERSUB_NO || w->value == LOOM_CONF_OVERSUB_EXCLUSIVE ||
                   loom_conf_parse_int(colon + 1, 0, &jobs) != 0 || jobs < 1 || jobs > U16MAX)))
        return conf_keys_bad(k, v, where, err, "expected NO, EXCLUSIVE, YES[:n] or FORCE[:n]");
    loom_conf_part_t *p = record;
    if (p) {
        p->oversubscribe = (int)w->value;
        p->oversubscribe_n =
            (w->value == LOOM_CONF_OVERSUB_YES || w->value == LOOM_CONF_OVERSUB_FORCE) ? jobs : 1;
    }
    return 0;
}

int loom_conf_key_parse(const loom_conf_key_t *k, const char *value, const char *where,
                        void *record, loom_err_t *err)
{
    switch (k->type) {
    case LOOM_CT_STR:
        if (k->words)
            return conf_keys_parse_words(k, value, where, record, err);
        conf_keys_set_str(k, record, value);
        return 0;
    case LOOM_CT_RECORD:
        if (!*value)
            return conf_keys_bad(k, value, where, err, "a name is required");
        conf_keys_set_str(k, record, value);
        return 0;
    case LOOM_CT_INT:
        return conf_keys_parse_int(k, value, where, record, err);
    case LOOM_CT_BOOL: {
        bool b;
        if (loom_conf_parse_bool(value, &b) != 0)
            return conf_keys_bad(k, value, where, err, "expected YES or NO");
        bool *f = conf_keys_field(k, record);
        if (f)
            *f = b;
        return 0;
    }
    case LOOM_CT_TIME:
        return conf_keys_parse_time(k, value, where, record, err);
    case LOOM_CT_MEM:
        return conf_keys_parse_mem(k, value, where, record, err);
    case LOOM_CT_ENUM:
    case LOOM_CT_FLAGS:
        return conf_keys_parse_words(k, value, where, record, err);
    case LOOM_CT_LIST:
        return conf_keys_parse_list(k, value, record);
    case LOOM_CT_HOSTLIST: {
        loom_hostlist_t *hl = NULL;
        loom_err_t e2;
        if (loom_hostlist_parse(value, &hl, &e2) < 0)
            return conf_keys_bad(k, value, where, err, e2.msg);
        loom_hostlist_destroy(hl);
        conf_keys_set_str(k, record, value);
        return 0;
    }
    case LOOM_CT_GRES: {
        loom_gres_list_t gl = LOOM_GRES_LIST_INIT;
        if (!*value || strcasecmp(value, "none") == 0) { /* "Gres=": none (overrides DEFAULT) */
            conf_keys_set_str(k, record, "");
            return 0;
        }
        loom_err_t e2;
        if (loom_gres_parse_node(value, &gl, &e2) < 0)
            return conf_keys_bad(k, value, where, err, e2.msg);
        loom_gres_list_free(&gl);
        conf_keys_set_str(k, record, value);
        return 0;
    }
    case LOOM_CT_HOST:
        return conf_keys_parse_host(k, value, where, record, err);
    case LOOM_CT_PORTS:
        return conf_keys_parse_ports(k, value, where, record, err);
    case LOOM_CT_OVERSUB:
        return conf_keys_parse_oversub(k, value, where, record, err);
    }
    return loom_errf(err, -LOOM_EINTERNAL, "key %s has no type", k->name);
}

void loom_conf_key_free(const loom_conf_key_t *k, void *record)
{
    void *f = conf_keys_field(k, record);
    if (!f)
        return;
    if (k->type == LOOM_CT_STR || k->type == LOOM_CT_RECORD || k->type == LOOM_CT_HOSTLIST ||
        k->type == LOOM_CT_GRES) {
        free(*(char **)f);
        *(char **)f = NULL;
    } else if (k->type == LOOM_CT_LIST) {
        loom_strv_free(f);
    }
}

/* ---- printing ------------------------------------------------------------ */

static void conf_keys_fmt_words(const loom_conf_key_t *k, unsigned v, loom_sbuf_t *out)
{
    unsigned covered = 0;
    size_t start = out->len;
    for (const loom_conf_word_t *w = k->words; w->name; w++) {
        if (w->value == 0 || (v & w->value) != w->value || (covered & w->value) == w->value)
            continue;
        if (out->len > start)
            loom_sbuf_addc(out, ',');
        for (const char *c = w->name; *c; c++)
            loom_sbuf_addc(out,
                           (k->flags & LOOM_CKF_LOWER) ? *c : (char)toupper((unsigned char)*c));
        covered |= w->value;
    }
    if (out->len == start) {
        const loom_conf_word_t *w = k->words;
        while (w->name && w->value != 0)
            w++;
        loom_sbuf_add(out, w->name ? w->name : "(null)");
    }
}

static void conf_keys_fmt_num(const loom_conf_key_t *k, int64_t v, loom_sbuf_t *out)
{
    if (v == LOOM_CONF_UNLIMITED && (k->flags & LOOM_CKF_INF)) {
        loom_sbuf_add(out, (k->flags & LOOM_CKF_INF_TEXT) ? "INFINITE" : "UNLIMITED");
        return;
    }
    if (v == LOOM_CONF_NOT_SET) {
        loom_sbuf_add(out, "NONE");
        return;
    }
    if (k->type == LOOM_CT_TIME) {
        loom_time_fmt_limit(v, out);
        return;
    }
    if (k->type == LOOM_CT_MEM && v == 0 && (k->flags & LOOM_CKF_INF)) {
        loom_sbuf_add(out, "UNLIMITED");
        return;
    }
    loom_sbuf_addf(out, "%lld", (long long)v);
    if (k->unit)
        loom_sbuf_addf(out, " %s", k->unit);
}

static void conf_keys_fmt_list(const loom_strv_t *l, loom_sbuf_t *out)
{
    if (l->n == 0)
        loom_sbuf_add(out, "(null)");
    for (size_t i = 0; i < l->n; i++)
        loom_sbuf_addf(out, "%s%s", i ? "," : "", l->v[i]);
}

void loom_conf_key_format(const loom_conf_key_t *k, const void *record, const char *text,
                          loom_sbuf_t *out)
{
    const void *f = (record && k->off != NF) ? (const char *)record + k->off : NULL;
    if (!f) {
        if (k->type == LOOM_CT_INT && text) {
            loom_sbuf_add(out, text);
            if (k->unit && !conf_keys_infinite(text))
                loom_sbuf_addf(out, " %s", k->unit);
        } else if (k->type == LOOM_CT_BOOL && text) {
            bool b = false;
            loom_conf_parse_bool(text, &b);
            loom_sbuf_add(out, b ? "Yes" : "No");
        } else {
            loom_sbuf_add(out, text ? text : "(null)");
        }
        return;
    }
    switch (k->type) {
    case LOOM_CT_INT:
    case LOOM_CT_TIME:
    case LOOM_CT_MEM:
        conf_keys_fmt_num(k, *(const int64_t *)f, out);
        break;
    case LOOM_CT_BOOL:
        loom_sbuf_add(out, *(const bool *)f ? "Yes" : "No");
        break;
    case LOOM_CT_ENUM: {
        const loom_conf_word_t *w = k->words;
        while (w->name && w->value != (unsigned)*(const int *)f)
            w++;
        loom_sbuf_add(out, w->name ? w->name : "(null)");
        break;
    }
    case LOOM_CT_FLAGS:
        conf_keys_fmt_words(k, *(const unsigned *)f, out);
        break;
    case LOOM_CT_LIST:
        conf_keys_fmt_list(f, out);
        break;
    default: {
        const char *s = *(char *const *)f;
        loom_sbuf_add(out, s ? s : "(null)");
    }
    }
}

int loom_conf_part_change(void *part, const char *key, const char *value, loom_err_t *err)
{
    const loom_conf_key_t *k = loom_conf_key_find(LOOM_CS_PART, key);
    bool scalar =
        k && (k->type == LOOM_CT_INT || k->type == LOOM_CT_BOOL || k->type == LOOM_CT_TIME ||
              k->type == LOOM_CT_MEM || k->type == LOOM_CT_ENUM || k->type == LOOM_CT_FLAGS ||
              k->type == LOOM_CT_OVERSUB);
    if (!scalar || (k->off == LOOM_CONF_NOFIELD && k->type != LOOM_CT_OVERSUB) ||
        (k->flags & LOOM_CKF_IGNORED) || strcasecmp(k->name, "Default") == 0)
        return loom_errf(err, -LOOM_ENOT_SUPPORTED, "Update of this parameter is not supported");
    loom_err_t e2 = {0};
    if (loom_conf_key_parse(k, value, NULL, part, &e2) < 0)
        return loom_errf(err, -EINVAL, "%s", e2.msg);
    return 0;
}
