"""The cluster state behind the expected outputs of test_cli_layouts.py.

The expected texts in cli_expected/ were captured from real Slurm 22.05
(slurmctld + slurmd on one host, the slurm.conf below) right after these
jobs were submitted; this module describes the same jobs, nodes and
partitions as Loom's wire records (docs/proto/messages.md §1), so that a
fake controller can feed them to Loom's commands and the outputs can be
compared byte for byte. Times are UTC (the tests run with TZ=UTC).
"""

T0 = 1795266622  # 2026-11-21T13:10:22Z: submit time of every job
NOW = T0 + 1  # when squeue ran

SLURM_CONF = """\
ClusterName=cmp
SlurmctldHost=localhost
SlurmUser=root
StateSaveLocation={state}
SlurmdSpoolDir={spool}
SlurmctldPort=1
SlurmdPort=17918
NodeName=n[1-3] NodeAddr=127.0.0.[9-11] Port=9 CPUs=4 RealMemory=2000 Feature=fast State=UNKNOWN
NodeName=localhost CPUs=2 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
PartitionName=long Nodes=n[1-3] MaxTime=2-00:00:00 DefaultTime=1:00:00 State=UP
PartitionName=verylongpartitionname Nodes=localhost MaxTime=30 State=DOWN
PartitionName=inact Nodes=n1 State=INACTIVE
"""

PRIO = 4294901759


def _job(job_id, **kw):
    rec = {
        "job_id": job_id, "name": "wrap", "user_id": 0, "user_name": "root", "group_id": 0,
        "group_name": "root", "partition": "debug", "state": ["PENDING"], "reason": "None",
        "priority": PRIO - job_id + 1, "nice": 0, "submit_time": T0, "eligible_time": T0,
        "start_time": 0, "end_time": 0, "time_limit": -1, "num_nodes": 1, "num_cpus": 1,
        "num_tasks": 1, "cpus_per_task": 1, "work_dir": "/tmp/rs", "batch_flag": 1,
        "requeue": True, "restart_cnt": 0, "exit_code": 0, "tres_req": "cpu=1,mem=1000M,node=1,billing=1",
        "alloc_node": "localhost", "alloc_sid": 7896,
    }
    rec.update(kw)
    return rec


def jobs():
    """The eight jobs of the capture, in the controller's (submission) order."""
    return [
        _job(1, state=["RUNNING"], start_time=NOW, nodes="localhost", batch_host="localhost",
             tres_alloc="cpu=1,node=1,billing=1"),
        _job(2, name="averyveryverylongname", state=["RUNNING"], start_time=NOW,
             end_time=NOW + 300, time_limit=5, nodes="localhost", batch_host="localhost",
             tres_alloc="cpu=1,node=1,billing=1"),
        _job(3, reason="JobHeldUser", priority=0, hold="user", eligible_time=0),
        _job(4, array_job_id=4, array_task_str="0-15%2", array_max_tasks=2,
             reason="Resources", priority=PRIO - 2),
        _job(5, partition="long", num_nodes=2, max_nodes=2, num_cpus=2, num_tasks=2,
             time_limit=60, priority=PRIO - 3,
             reason="Nodes required for job are DOWN, DRAINED or reserved for jobs in "
                    "higher priority partitions",
             tres_req="cpu=2,mem=4000M,node=2,billing=2"),
        _job(6, reason="Priority", time_limit=1564, num_cpus=2, num_tasks=2, priority=PRIO - 4,
             tres_req="cpu=2,mem=1000M,node=1,billing=2"),
        _job(7, reason="Dependency", dependency="afterok:1(unfulfilled)", priority=PRIO - 5,
             eligible_time=0),
        _job(8, reason="BeginTime", start_time=T0 + 3600, priority=PRIO - 6,
             eligible_time=T0 + 3600),
    ]


def nodes():
    """Node records as sinfo saw them at the first capture (n1-n3 never registered)."""
    base = {"alloc_cpus": 0, "alloc_mem": 0}
    recs = [dict(base, name="localhost", state=["IDLE"], version="22.05.8", arch="x86_64",
                 free_mem=23556, cpu_load=0.27, partitions=["debug", "verylongpartitionname"])]
    for i, t in ((1, "13:09:47"), (2, "13:09:57"), (3, "13:10:07")):
        recs.append(dict(base, name="n%d" % i, state=["UNKNOWN"],
                         reason="NO NETWORK ADDRESS FOUND", reason_user="root",
                         reason_time=T0 - 35 + (i - 1) * 10))
    return recs


def nodes_later():
    """After SlurmdTimeout and two admin updates: n1 down*, n2 drained*, n3 down*."""
    recs = nodes()
    recs[1]["state"] = ["DOWN", "NOT_RESPONDING"]
    recs[2].update(state=["DOWN", "DRAIN", "NOT_RESPONDING"], reason="maint",
                   reason_time=T0 + 37)
    recs[3].update(state=["DOWN", "NOT_RESPONDING"], reason="broken", reason_time=T0 + 37)
    return recs


def partitions():
    return [{"name": "debug", "state": "UP"}, {"name": "long", "state": "UP"},
            {"name": "verylongpartitionname", "state": "DOWN"},
            {"name": "inact", "state": "INACTIVE"}]
