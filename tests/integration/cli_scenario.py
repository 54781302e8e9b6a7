"""The cluster states behind the expected outputs of test_cli_layouts.py.

The expected texts in cli_expected/*.txt were captured from real Slurm
22.05.8 (slurmctld + slurmd on one host, with the slurm.conf below) at three
moments; this module describes the same jobs, nodes and partitions as Loom's
wire records (docs/proto/messages.md §1, §1.1, §1.2) so that a fake
controller can feed them to Loom's commands and the outputs can be compared
byte for byte. Times are UTC (the tests run with TZ=UTC).

Snapshots (the first word of each "### " header in the expected files):
  idle     the cluster before any job: localhost idle, n1-n3 never registered
  jobs     right after eight jobs were submitted (squeue at T0+1)
  running  a few seconds later: jobs 1 and 2 run on localhost (scontrol)
  t14      the same, 14 s after T0 (scontrol -d show job 2)
  later    after SlurmdTimeout and two admin updates: n1 down*, n2 drained*, n3 down*
"""

T0 = 1795266622  # 2026-11-21T13:10:22Z: submit time of every job

SLURM_CONF = """\
ClusterName=cmp
SlurmctldHost=localhost
SlurmUser=root
StateSaveLocation={state}
SlurmdSpoolDir={spool}
SlurmctldPort=1
SlurmdPort=17818
NodeName=n[1-3] NodeAddr=127.0.0.[9-11] Port=9 CPUs=4 RealMemory=2000 Feature=fast State=UNKNOWN
NodeName=localhost CPUs=2 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
PartitionName=long Nodes=n[1-3] MaxTime=2-00:00:00 DefaultTime=1:00:00 State=UP
PartitionName=verylongpartitionname Nodes=localhost MaxTime=30 State=DOWN
PartitionName=inact Nodes=n1 State=INACTIVE
"""

PRIO = 4294901759
NOW = {"idle": T0 - 10, "jobs": T0 + 1, "running": T0 + 1, "t14": T0 + 14, "later": T0 + 40}


def _job(job_id, **kw):
    rec = {
        "job_id": job_id, "name": "wrap", "user_id": 0, "user_name": "root", "group_id": 0,
        "group_name": "root", "partition": "debug", "state": ["PENDING"], "reason": "None",
        "priority": PRIO - job_id + 1, "nice": 0, "submit_time": T0, "eligible_time": T0,
        "accrue_time": T0, "last_sched_eval": T0 + 1, "start_time": 0, "end_time": 0,
        "time_limit": -1, "num_nodes": 1, "num_cpus": 1, "num_tasks": 1, "cpus_per_task": 1,
        "work_dir": "/tmp/rs", "batch_flag": 1, "requeue": True, "restart_cnt": 0,
        "exit_code": 0, "tres_req": "cpu=1,mem=1000M,node=1,billing=1",
        "alloc_node": "localhost", "alloc_sid": 7896,
    }
    rec.update(kw)
    return rec


def jobs():
    """The eight jobs of the capture, in the controller's (submission) order."""
    return [
        _job(1, state=["RUNNING"], start_time=T0 + 1, nodes="localhost", batch_host="localhost",
             tres_alloc="cpu=1,node=1,billing=1",
             alloc=[{"node": "localhost", "cpus": [0], "mem": 0, "gres": []}]),
        _job(2, name="averyveryverylongname", state=["RUNNING"], start_time=T0 + 1,
             end_time=T0 + 301, time_limit=5, nodes="localhost", batch_host="localhost",
             tres_alloc="cpu=1,node=1,billing=1",
             alloc=[{"node": "localhost", "cpus": [1], "mem": 0, "gres": []}]),
        _job(3, reason="JobHeldUser", priority=0, hold="user", eligible_time=0, accrue_time=0,
             last_sched_eval=T0),
        _job(4, array_job_id=4, array_task_str="0-15%2", array_max_tasks=2,
             reason="Resources", priority=PRIO - 2, eligible_time=T0 + 1, accrue_time=T0 + 1),
        _job(5, partition="long", num_nodes=2, max_nodes=2, num_cpus=2, num_tasks=2,
             time_limit=60, priority=PRIO - 3,
             reason="Nodes required for job are DOWN, DRAINED or reserved for jobs in "
                    "higher priority partitions",
             tres_req="cpu=2,mem=4000M,node=2,billing=2"),
        _job(6, reason="Priority", time_limit=1564, num_cpus=2, num_tasks=2, priority=PRIO - 4,
             tres_req="cpu=2,mem=1000M,node=1,billing=2"),
        _job(7, reason="Dependency", dependency="afterok:1(unfulfilled)", priority=PRIO - 5,
             eligible_time=0, accrue_time=0, last_sched_eval=T0),
        _job(8, reason="BeginTime", start_time=T0 + 3600, priority=PRIO - 6,
             eligible_time=T0 + 3600, accrue_time=T0 + 3600, last_sched_eval=T0),
    ]


def _node(name, **kw):
    rec = {"name": name, "alloc_cpus": 0, "alloc_mem": 0, "last_busy": T0 - 15}
    rec.update(kw)
    return rec


def _unregistered(i, state):
    return _node("n%d" % i, state=state, reason="NO NETWORK ADDRESS FOUND",
                 reason_user="root", reason_uid=0, reason_time=T0 - 35 + (i - 1) * 10)


def _localhost(**kw):
    return _node("localhost", version="22.05.8", arch="x86_64",
                 os="Linux 6.18.44-fc-v595 #1 SMP PREEMPT_DYNAMIC @0", free_mem=23556,
                 cpu_load=0.27, boot_time=T0 - 603, slurmd_start_time=T0 - 15,
                 partitions=["debug", "verylongpartitionname"], **kw)


def nodes(snapshot):
    if snapshot == "idle":
        return [_localhost(state=["IDLE"])] + [_unregistered(i, ["UNKNOWN"]) for i in (1, 2, 3)]
    if snapshot in ("jobs", "running", "t14"):
        return [_localhost(state=["ALLOCATED"], alloc_cpus=2)] + [
            _unregistered(i, ["UNKNOWN", "NOT_RESPONDING"]) for i in (1, 2, 3)]
    recs = [_localhost(state=["IDLE"])] + [_unregistered(i, ["DOWN", "NOT_RESPONDING"])
                                           for i in (1, 2, 3)]
    recs[2].update(state=["DOWN", "DRAIN", "NOT_RESPONDING"], reason="maint", reason_time=T0 + 37)
    recs[3].update(reason="broken", reason_time=T0 + 37)
    return recs


def partitions():
    return [{"name": "debug", "state": "UP"}, {"name": "long", "state": "UP"},
            {"name": "verylongpartitionname", "state": "DOWN"},
            {"name": "inact", "state": "INACTIVE"}]


def replies(snapshot):
    """The fake controller's answers for one snapshot."""
    return {
        "job.info": {"jobs": jobs() if snapshot != "idle" else [], "now": NOW[snapshot]},
        "node.info": {"nodes": nodes(snapshot)},
        "part.info": {"partitions": partitions()},
        "ping": {"host": "vm", "role": "primary", "version": "22.05.8"},
    }
