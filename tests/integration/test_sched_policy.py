"""Scheduling on real daemons: multifactor priorities and sprio, backfill and
squeue --start, sbatch --test-only, partitions (tiers, several per job),
GPU options, constraints, --deadline, --nice, holds and admin priorities.

The sprio and squeue --start expectations come from a real slurmctld
22.05.8 run on the same configuration (see test_sprio_as_slurm): three
nodes of 4 CPUs and 1000 MiB, partitions debug (node1, PriorityJobFactor
10), hi (node1, 20, PriorityTier 2) and big (all nodes, 5), the weights
PriorityWeightAge=1000, JobSize=2000, Partition=3000, TRES CPU=1000,Mem=500.
"""
import os
import re
import subprocess
import time

import pytest

from conftest import BIN

SLEEP = "#!/bin/sh\nsleep %d\n"

MF = """PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityWeightJobSize=2000
PriorityWeightPartition=3000
PriorityWeightTRES=CPU=1000,Mem=500
SchedulerParameters=bf_interval=1"""

PARTS = ["PartitionName=debug Nodes=node1 Default=YES MaxTime=INFINITE State=UP "
         "PriorityJobFactor=10",
         "PartitionName=hi Nodes=node1 MaxTime=60 State=UP PriorityJobFactor=20 PriorityTier=2",
         "PartitionName=big Nodes=ALL MaxTime=60 State=UP PriorityJobFactor=5"]


def rc_of(reply):
    return reply.get("rc")


@pytest.fixture
def ref(make_cluster):
    """The reference cluster with node2 and node3 drained (the FUTURE nodes of
    the real run): node1 runs a 2-minute job, the rest pends."""
    c = make_cluster(nodes=3, cpus=4, memory=1000, gpus=0, conf_extra=MF, partitions=PARTS)
    c.run("scontrol", "update", "NodeName=node[2-3]", "State=DRAIN", "Reason=ref", check=True)
    m = {"mem_per_node": 1000}
    first = c.submit(SLEEP % 300, ntasks=4, time_limit=2, **m)["job_id"]
    c.wait_job(first, "RUNNING")
    ids = [c.submit(ntasks=4, time_limit=5, **m)["job_id"],
           c.submit(ntasks=2, time_limit=10, **m)["job_id"],
           c.submit(ntasks=1, time_limit=1, **m)["job_id"],
           c.submit(hold=True, **m)["job_id"],
           c.submit(ntasks=1, nice=100, time_limit=1, **m)["job_id"],
           c.submit(begin_time=int(time.time()) + 3600, **m)["job_id"],
           c.submit(nodes=2, partition="big", **m)["job_id"],
           c.submit(ntasks=1, partition="hi,debug,big", time_limit=5, **m)["job_id"]]
    c.ids = [first] + ids
    return c


# sprio on slurmctld 22.05.8 (its jobs 1-3, 6, 8, 9; job 4 there is job 2 here).
SPRIO = """\
          JOBID PARTITION   PRIORITY       SITE        AGE    JOBSIZE  PARTITION                 TRES
              2 debug           3666          0          0        667       1500     cpu=1000,mem=500
              3 debug           3000          0          0        500       1500      cpu=500,mem=500
              4 debug           2666          0          0        417       1500      cpu=250,mem=500
              6 debug           2566          0          0        417       1500      cpu=250,mem=500
              8 big             2083          0          0        833        750      cpu=167,mem=333
              9 hi              4166          0          0        417       3000      cpu=250,mem=500
              9 debug           2666          0          0        417       1500      cpu=250,mem=500
              9 big             1416          0          0        417        750       cpu=83,mem=167
"""

SPRIO_L_HEAD = ("          JOBID PARTITION     USER   PRIORITY       SITE        AGE      ASSOC"
                "  FAIRSHARE    JOBSIZE  PARTITION        QOS        NICE                 TRES")
SPRIO_L_6 = ("              6 debug     %8.8s       2566          0          0          0"
             "          0        417       1500          0         100      cpu=250,mem=500")
SPRIO_N = """\
          JOBID PARTITION PRIORITY   AGE        JOBSIZE    PARTITION  TRES                
              2 debug     0.00000085 0.0000000  0.3333333  0.5000000  cpu=1.00,mem=1.00   
"""
SPRIO_W = """\
          JOBID PARTITION   PRIORITY       SITE        AGE    JOBSIZE  PARTITION                 TRES
        Weights                               1       1000       2000       3000     CPU=1000,Mem=500
"""


def test_sprio_as_slurm(ref):
    c = ref
    assert c.ids == list(range(1, 10))
    c.wait_for(lambda: c.run("sprio").stdout == SPRIO, "sprio as Slurm prints it")
    out = c.run("sprio", "-l").stdout.splitlines()
    assert out[0] == SPRIO_L_HEAD
    assert SPRIO_L_6 % c.user in out
    # -n: AGE is the seconds waited over PriorityMaxAge (7 days): 0.0000017 once a
    # second has passed on a loaded host, so that column is compared by shape.
    norm = c.run("sprio", "-n").stdout.splitlines(keepends=True)[:2]
    assert re.fullmatch(r"0\.\d{7}", norm[1][37:46].strip()), norm[1]
    assert [ln[:37] + ln[46:] for ln in norm] == [
        ln[:37] + ln[46:] for ln in SPRIO_N.splitlines(keepends=True)]
    assert c.run("sprio", "-w").stdout == SPRIO_W
    assert c.run("sprio", "-j", "6", "-h").stdout.split()[:3] == ["6", "debug", "2566"]
    # held and begin-time jobs are not listed; -j with nothing to show says so
    nothing = c.run("sprio", "-j", "5")
    assert nothing.returncode == 0
    assert nothing.stdout == "Unable to find jobs matching user/id(s) specified\n"
    by_prio = c.run("sprio", "-h", "-S", "-y", "-o", "%i %r").stdout.split("\n")[0]
    assert by_prio == "9 hi"
    # squeue shows a pending multi-partition job's partitions, cut to the width
    sq = c.run("squeue", "-h", "-j", "9", "-o", "%.9P %Q").stdout.split()
    assert sq == ["hi,debug,", "4166"]


def test_sprio_basic_refuses(cluster):
    p = cluster.run("sprio")
    assert p.returncode == 1
    assert p.stderr == ("You are not running a supported priority plugin\n(priority/basic).\n"
                        "Only 'priority/multifactor' is supported.\n")


def _start(rec):
    return rec.get("start_time", 0)


def test_squeue_start_as_slurm(ref):
    """Planned starts: the tier-2 job first at the running job's end, then
    each reservation's end rounded down to bf_resolution (60 s), as 22.05."""
    c = ref
    first = c.job(1)
    end1 = first["start_time"] + 120
    c.wait_for(lambda: _start(c.job(6)) > 0 and c.job(9).get("sched_nodes"), "a backfill plan")
    r = lambda t: t // 60 * 60
    want = {9: end1, 2: r(end1 + 300)}
    want[3] = r(want[2] + 300)
    want[4] = r(want[3] + 600)
    want[6] = r(want[4] + 60)
    got = {j: _start(c.job(j)) for j in want}
    assert got == want
    out = c.run("squeue", "--start").stdout.splitlines()
    assert out[0] == ("             JOBID PARTITION     NAME     USER ST          START_TIME  NODES "
                      "SCHEDNODES           NODELIST(REASON)")
    ids = [int(l.split()[0]) for l in out[1:]]
    assert ids == [9, 2, 3, 4, 6, 7, 5, 8]  # by start; unknown (N/A) last
    line9 = out[1]
    assert re.match(r" +9 hi,debug, +test +\S+ PD \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d +1 node1 ",
                    line9), line9
    held = [l for l in out if l.split()[0] == "5"][0]
    assert " N/A " in held and "(null)" in held and "(JobHeldUser)" in held


def test_backfill_starts_small_job_early(make_cluster):
    c = make_cluster(nodes=1, cpus=4, gpus=0, conf_extra="SchedulerParameters=bf_interval=1")
    blocker = c.submit(SLEEP % 120, ntasks=2, time_limit=2)["job_id"]
    c.wait_job(blocker, "RUNNING")
    big = c.submit(SLEEP % 5, ntasks=4, time_limit=5)["job_id"]
    late = c.submit(SLEEP % 5, ntasks=2, time_limit=10)["job_id"]  # would delay big
    small = c.submit(SLEEP % 1, ntasks=1, time_limit=1)["job_id"]  # ends before big starts
    c.wait_job(small, "COMPLETED", timeout=30)
    assert c.state_of(c.job(big)) == "PENDING" and c.job(big)["reason"] == "Resources"
    assert c.state_of(c.job(late)) == "PENDING"
    blk = c.job(blocker)
    c.wait_for(lambda: _start(c.job(big)) == blk["start_time"] + 120, "big's planned start")
    assert _start(c.job(late)) == (blk["start_time"] + 120 + 300) // 60 * 60
    sq = c.run("squeue", "--start", "-h", "-o", "%i %Y").stdout.split()
    assert sq[:2] == [str(big), "node1"]
    # scontrol as 22.05 shows a job backfill planned, and one it started
    text = c.run("scontrol", "show", "job", str(big), check=True).stdout
    assert "\n   NodeList= SchedNodeList=node1\n" in text, text
    assert re.search(r" LastSchedEval=\S+ Scheduler=Backfill:\*\n", text), text
    text = c.run("scontrol", "show", "job", str(small), check=True).stdout
    assert " Scheduler=Backfill\n" in text and "SchedNodeList" not in text, text
    # sbatch --test-only plans from the running jobs: now for a fitting job
    p = c.run("sbatch", "--test-only", "-n1", "-t1", "--wrap=true")
    assert re.fullmatch(r"sbatch: Job \d+ to start at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d using 1 "
                        r"processors on nodes node1 in partition debug\n", p.stderr), p.stderr
    p = c.run("sbatch", "--test-only", "-n4", "-t1", "--wrap=true")
    when = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(blk["start_time"] + 120))
    assert "to start at %s using 4 processors" % when in p.stderr, p.stderr
    for j in (blocker, big, late):
        c.rpc("job.signal", job_id=j, cancel=True, signal=9)


def test_tiers_and_partition_choice(make_cluster):
    parts = ["PartitionName=low Nodes=node1 Default=YES MaxTime=INFINITE State=UP",
             "PartitionName=high Nodes=node1 MaxTime=INFINITE State=UP PriorityTier=5",
             "PartitionName=other Nodes=node2 MaxTime=INFINITE State=UP",
             "PartitionName=closed Nodes=node2 MaxTime=INFINITE State=DOWN",
             "PartitionName=secret Nodes=node2 MaxTime=INFINITE State=UP Hidden=YES"]
    c = make_cluster(nodes=2, cpus=2, gpus=0, partitions=parts)
    # Hidden=YES: sinfo lists it with -a, or to root and SlurmUser (the test's user),
    # as sinfo 22.05.8 does side by side
    assert "secret" in c.run("sinfo", "-h", "-o", "%P").stdout.split()
    assert "secret" in c.run("sinfo", "-a", "-h", "-o", "%P").stdout.split()
    if os.getuid() == 0:  # anyone else sees it only with -a
        line = "%s/sinfo -h -o %%P" % BIN
        env = dict(c.env, HOME="/")
        for extra, shown in (("", False), (" -a", True)):
            p = subprocess.run(["runuser", "-u", "nobody", "--", "sh", "-c", line + extra],
                               env=env, capture_output=True, text=True, timeout=60)
            assert ("secret" in p.stdout.split()) == shown, (extra, p.stdout, p.stderr)
    blocker = c.submit(SLEEP % 30, ntasks=2, partition="low")["job_id"]
    c.wait_job(blocker, "RUNNING")
    low = c.submit(SLEEP % 1, ntasks=2, partition="low")["job_id"]
    high = c.submit(SLEEP % 1, ntasks=2, partition="high")["job_id"]
    # a job naming a busy and a free partition runs in the free one, which becomes its partition
    both = c.submit(SLEEP % 1, ntasks=1, partition="low,other")["job_id"]
    rec = c.wait_job(both, "RUNNING", "COMPLETED")
    assert rec["partition"] == "other" and rec["nodes"] == "node2"
    down = c.submit(partition="closed")["job_id"]
    c.wait_for(lambda: c.job(down)["reason"] == "PartitionDown", "PartitionDown")
    c.rpc("job.signal", job_id=blocker, cancel=True, signal=9)
    # the higher tier goes first though submitted later
    h = c.wait_job(high, "COMPLETED")
    l = c.wait_job(low, "COMPLETED")
    assert h["start_time"] <= l["start_time"]
    assert l["start_time"] >= h["end_time"]


def test_priorities_nice_hold_update(make_cluster):
    c = make_cluster(nodes=1, cpus=2, gpus=0, conf_extra=MF.replace("bf_interval=1", ""))
    blocker = c.submit(SLEEP % 60, ntasks=2)["job_id"]
    c.wait_job(blocker, "RUNNING")
    a = c.submit(ntasks=1)["job_id"]
    b = c.submit(ntasks=1, nice=500)["job_id"]
    held = c.submit(ntasks=1, hold=True)["job_id"]
    c.wait_for(lambda: c.job(b)["priority"] == c.job(a)["priority"] - 500, "nice lowers priority")
    assert c.job(held)["priority"] == 0 and c.job(held)["reason"] == "JobHeldUser"
    c.run("scontrol", "release", str(held), check=True)
    c.wait_for(lambda: c.job(held)["priority"] == c.job(a)["priority"], "released job's priority")
    c.run("scontrol", "update", "JobId=%d" % b, "Priority=90000", check=True)
    c.wait_for(lambda: c.job(b)["priority"] == 90000, "admin priority")
    c.run("scontrol", "update", "JobId=%d" % a, "Nice=10", check=True)
    c.wait_for(lambda: c.job(a)["priority"] == c.job(held)["priority"] - 10, "nice update")
    c.rpc("job.signal", job_id=blocker, cancel=True, signal=9)
    rb = c.wait_job(b, "COMPLETED")
    ra = c.wait_job(a, "COMPLETED")
    assert rb["start_time"] <= ra["start_time"]


def test_deadline_and_begin(cluster):
    now = int(time.time())
    late = cluster.submit(time_limit=10, deadline=now + 60)["job_id"]
    rec = cluster.wait_job(late, "DEADLINE")
    assert rec["reason"] == "DeadLine"
    # status 1, as slurmctld 22.05 sets it: scontrol's ExitCode=0:1
    assert rec["exit_code"] == 1
    p = cluster.run("scontrol", "show", "job", str(late), check=True)
    assert " ExitCode=0:1" in p.stdout, p.stdout
    fine = cluster.submit(time_limit=1, deadline=now + 3600)["job_id"]
    cluster.wait_job(fine, "COMPLETED")
    later = cluster.submit(begin_time=now + 3)["job_id"]
    cluster.wait_for(lambda: cluster.job(later)["reason"] == "BeginTime", "BeginTime")
    rec = cluster.wait_job(later, "COMPLETED", timeout=30)
    assert rec["start_time"] >= now + 3


def test_gpu_options(make_cluster):
    c = make_cluster(nodes=2, cpus=8, gpus=4, memory=8000)
    env = "#!/bin/sh\necho G=$CUDA_VISIBLE_DEVICES\nsleep 20\n"
    # --gpus-per-task=2 with 3 tasks on 4-GPU nodes: 2 nodes, GPUs per task
    j = c.submit(env, ntasks=3, tres_per_task="gres/gpu:2")["job_id"]
    rec = c.wait_job(j, "RUNNING")
    gpus = lambda a: sum(len(g["index"]) for g in a["gres"])
    per_node = sorted(gpus(a) for a in rec["alloc"])
    assert per_node == [2, 4] and sum(a["tasks"] for a in rec["alloc"]) == 3
    # --cpus-per-gpu and --mem-per-gpu size the allocation by its GPUs
    k = c.submit(env, gres="gpu:2", cpus_per_gpu=3, memory_per_gpu=1000)["job_id"]
    rec = c.wait_job(k, "RUNNING")
    (a,) = rec["alloc"]
    assert len(a["cpus"]) == 6 and a["mem"] == 2000 and gpus(a) == 2
    for x in (j, k):
        c.rpc("job.signal", job_id=x, cancel=True, signal=9)


def test_constraints_counts_and_brackets(make_cluster):
    c = make_cluster(nodes=4, cpus=2, gpus=0, start=False)
    text = c.conf.read_text()
    for i, f in enumerate(["rack1,a", "rack1,a", "rack2,b", "rack2,b"]):
        text = text.replace("NodeName=node%d " % (i + 1), "NodeName=node%d Features=%s " % (i + 1, f))
    c.conf.write_text(text)
    c.start()
    reply = c.submit(SLEEP % 20, nodes=2, constraints="[rack1|rack2]")
    assert rc_of(reply) == 0, reply
    j = reply["job_id"]
    rec = c.wait_job(j, "RUNNING")
    assert rec["nodes"] in ("node[1-2]", "node[3-4]")
    k = c.submit(SLEEP % 1, nodes=2, constraints="[a*1&b*1]")["job_id"]
    rec = c.wait_job(k, "RUNNING", "COMPLETED")
    assert rec["nodes"] in ("node[1,3]", "node[1,4]", "node[2-3]", "node[2,4]")
    # more nodes of rack1 than exist is refused as Slurm refuses it
    assert rc_of(c.submit(nodes=3, constraints="[rack1]")) in ("LOOM_ENODE_CONFIG",
                                                                "LOOM_EINVAL_NODECOUNT")
    c.rpc("job.signal", job_id=j, cancel=True, signal=9)


def test_contiguous_and_oversubscribe(make_cluster):
    parts = ["PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP "
             "OverSubscribe=FORCE:2"]
    c = make_cluster(nodes=3, cpus=2, gpus=0, partitions=parts)
    c.run("scontrol", "update", "NodeName=node2", "State=DRAIN", "Reason=gap", check=True)
    j = c.submit(SLEEP % 1, nodes=2, contiguous=True)["job_id"]
    c.wait_for(lambda: c.job(j)["reason"] in ("Resources", CTLD_DOWN), "contiguous waits")
    c.run("scontrol", "update", "NodeName=node2", "State=RESUME", check=True)
    rec = c.wait_job(j, "RUNNING", "COMPLETED")
    assert rec["nodes"] in ("node[1-2]", "node[2-3]")
    c.wait_job(j, "COMPLETED")
    # FORCE:2: two 2-CPU jobs share node1's CPUs
    a = c.submit(SLEEP % 20, ntasks=2, nodelist="node1")["job_id"]
    b = c.submit(SLEEP % 20, ntasks=2, nodelist="node1")["job_id"]
    ra, rb = c.wait_job(a, "RUNNING"), c.wait_job(b, "RUNNING")
    assert ra["alloc"][0]["cpus"] == rb["alloc"][0]["cpus"] == [0, 1]
    for x in (a, b):
        c.rpc("job.signal", job_id=x, cancel=True, signal=9)


CTLD_DOWN = ("Nodes required for job are DOWN, DRAINED or reserved for jobs in higher "
             "priority partitions")
