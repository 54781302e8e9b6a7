"""Usage limits of associations and QOS (issue 7): GrpTRESMins, MaxTRESMins,
GrpWall, AccountingStorageEnforce=safe and the partition's QOS, with Slurm
22.05's pending reasons and submit rejections.

Usage comes from the fair-share code (priority/multifactor), recalculated
every second here (PriorityCalcPeriod=0:01) and never decayed
(PriorityDecayHalfLife=0), so one short job with 8 CPUs for 8 seconds uses
more than GrpTRESMins=cpu=1 (60 CPU-seconds) without any test waiting minutes.
Fixtures as test_assoc_limits.py: a real loomdbd on SQLite, and PostgreSQL
too when LOOM_TEST_PGSQL is set."""
import pytest

from test_assoc_limits import BACKENDS, AcctCluster

PRIO = ("PriorityType=priority/multifactor\nPriorityCalcPeriod=0:01\n"
        "PriorityDecayHalfLife=0\nPriorityWeightFairshare=1000\n")
POLICY_ERR = ("sbatch: error: Batch job submission failed: Job violates accounting/QOS "
              "policy (job submit limit, user's size and/or time limits)\n")


@pytest.fixture(params=BACKENDS)
def acct(request, make_cluster):
    made = []

    def make(enforce="associations,limits,qos", **kw):
        kw["conf_extra"] = PRIO + kw.get("conf_extra", "")
        a = AcctCluster(make_cluster, request.param, enforce=enforce, **kw)
        made.append(a)
        return a

    yield make
    for a in made:
        a.close()


def submit(a, *args):
    p = a.sbatch(*args)
    assert p.returncode == 0, p.stderr
    return int(p.stdout.strip())


def test_grp_tres_mins_used_up(acct):
    """Without safe a job starts while usage is under GrpTRESMins and is
    timed out once the decayed usage reached it (as slurmctld does); the
    next one waits (AssocGrpCPUMinutesLimit) and runs when the limit is
    raised."""
    a = acct()
    a.mgr("add", "account", "phys", "grptresmins=cpu=1")
    a.add_user("phys")
    a.c.start()
    gen = a.wait_loaded()
    big = submit(a, "-n", "8", "-t", "5", "--wrap=sleep 300")
    rec = a.c.wait_job(big, "TIMEOUT", timeout=90)
    assert rec["reason"] == "TimeLimit"
    small = submit(a, "-n", "1", "-t", "1", "--wrap=sleep 300")
    a.c.wait_for(lambda: a.reason(small) == "AssocGrpCPUMinutesLimit",
                 "AssocGrpCPUMinutesLimit", timeout=60)
    out = a.c.run("squeue", "-h", "-o", "%i %T %r", "-j", str(small)).stdout
    assert out == "%d PENDING AssocGrpCPUMinutesLimit\n" % small
    a.mgr("modify", "account", "phys", "set", "grptresmins=cpu=100000")
    a.wait_loaded(gen)
    a.c.wait_job(small, "RUNNING")


def test_max_tres_mins_and_deny_on_limit(acct):
    """MaxTRESMins (MaxTRESMinsPerJob) of a QOS: time limit x CPUs over it
    pends; with DenyOnLimit it is rejected at submit and a job without a
    time limit gets the longest that fits."""
    a = acct()
    a.mgr("add", "account", "phys")
    a.mgr("add", "qos", "mins", "maxtresmins=cpu=10")
    a.add_user("phys", "qos=mins")
    a.c.start()
    gen = a.wait_loaded()
    over = submit(a, "-n", "2", "-t", "10", "--wrap=true")
    a.c.wait_for(lambda: a.reason(over) == "QOSMaxCpuMinutesPerJobLimit",
                 "QOSMaxCpuMinutesPerJobLimit")
    fits = submit(a, "-n", "2", "-t", "5", "--wrap=sleep 300")
    a.c.wait_job(fits, "RUNNING")
    a.mgr("modify", "qos", "mins", "set", "flags=DenyOnLimit")
    a.wait_loaded(gen)
    p = a.sbatch("-n", "2", "-t", "10", "--wrap=true")
    assert p.returncode == 1
    assert p.stderr == "sbatch: error: QOSMaxCpuMinutesPerJobLimit\n" + POLICY_ERR
    j = submit(a, "-n", "2", "--hold", "--wrap=true")
    assert a.c.job(j)["time_limit"] == 5


def test_safe_grp_tres_mins(acct):
    """With safe a job starts only if its time limit x CPUs, plus what the
    running jobs may still use, fits in what is left of GrpTRESMins."""
    a = acct(enforce="associations,limits,qos,safe")
    a.mgr("add", "account", "phys", "grptresmins=cpu=100")
    a.add_user("phys")
    a.c.start()
    gen = a.wait_loaded()
    never = submit(a, "-n", "2", "-t", "60", "--wrap=true")
    a.c.wait_for(lambda: a.reason(never) == "AssocGrpCPUMinutesLimit", "the job alone too big")
    first = submit(a, "-n", "1", "-t", "60", "--wrap=sleep 300")
    a.c.wait_job(first, "RUNNING")
    second = submit(a, "-n", "1", "-t", "50", "--wrap=sleep 300")
    a.c.wait_for(lambda: a.reason(second) == "AssocGrpCPUMinutesLimit",
                 "room for the running job's remaining minutes")
    a.c.run("scancel", str(first), check=True)
    a.c.wait_job(second, "RUNNING")
    assert a.c.job(never)["state"][0] == "PENDING"
    # A limit lowered under a running job: with safe it runs on (slurmctld
    # times jobs out only without safe); new jobs wait.
    a.mgr("modify", "account", "phys", "set", "grptresmins=cpu=0")
    a.wait_loaded(gen)
    late = submit(a, "-n", "1", "-t", "1", "--wrap=true")
    a.c.wait_for(lambda: a.reason(late) == "AssocGrpCPUMinutesLimit", "the lowered limit")
    assert a.c.job(second)["state"][0] == "RUNNING"


def test_grp_wall_safe(acct):
    """GrpWall with safe: a job whose time limit passes what is left waits
    (AssocGrpWallLimit, QOSGrpWallLimit); a job without a time limit gets
    the GrpWall as its limit, as slurmctld gives it."""
    a = acct(enforce="associations,limits,qos,safe")
    a.mgr("add", "account", "phys", "grpwall=10")
    a.mgr("add", "qos", "short", "grpwall=5")
    a.add_user("phys", "qos=normal,short")
    a.c.start()
    a.wait_loaded()
    long_ = submit(a, "-t", "11", "--wrap=true")
    a.c.wait_for(lambda: a.reason(long_) == "AssocGrpWallLimit", "AssocGrpWallLimit")
    q = submit(a, "--qos=short", "-t", "6", "--wrap=true")
    a.c.wait_for(lambda: a.reason(q) == "QOSGrpWallLimit", "QOSGrpWallLimit")
    ok = submit(a, "--wrap=sleep 300")
    assert a.c.job(ok)["time_limit"] == 10
    a.c.wait_job(ok, "RUNNING")


def test_partition_qos(acct):
    """The partition's QOS (slurm.conf QOS=) applies to every job in the
    partition before the job's own QOS, unless that one has OverPartQOS;
    its submit limits count the partition's jobs."""
    part = ["PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP QOS=pq"]
    a = acct(partitions=part)
    a.mgr("add", "account", "phys")
    a.mgr("add", "qos", "pq", "maxwall=10", "maxsubmitjobsperuser=3")
    a.mgr("add", "qos", "loose", "maxwall=60")
    a.mgr("add", "qos", "boss", "maxwall=60", "flags=OverPartQOS")
    a.add_user("phys", "qos=normal,loose,boss")
    a.c.start()
    a.wait_loaded()
    dflt = submit(a, "--hold", "--wrap=true")
    assert a.c.job(dflt)["time_limit"] == 10
    held = submit(a, "--qos=loose", "-t", "20", "--wrap=true")
    a.c.wait_for(lambda: a.reason(held) == "QOSMaxWallDurationPerJobLimit",
                 "the partition QOS's MaxWall first")
    boss = submit(a, "--qos=boss", "-t", "20", "--wrap=sleep 300")
    a.c.wait_job(boss, "RUNNING")
    # Its submit limits count every job of the partition, whatever their own QOS.
    p = a.sbatch("--qos=loose", "-t", "5", "--wrap=true")
    assert p.returncode == 1
    assert p.stderr == "sbatch: error: QOSMaxSubmitJobPerUserLimit\n" + POLICY_ERR


def test_grp_tres_run_mins(acct):
    """GrpTRESRunMins of a QOS: the running jobs' remaining CPU-minutes plus
    the job's time limit x CPUs (QOSGrpCPURunMinutesLimit), safe or not."""
    a = acct()
    a.mgr("add", "account", "phys")
    a.mgr("add", "qos", "run", "grptresrunmins=cpu=100")
    a.add_user("phys", "qos=run")
    a.c.start()
    a.wait_loaded()
    first = submit(a, "-n", "1", "-t", "60", "--wrap=sleep 300")
    a.c.wait_job(first, "RUNNING")
    second = submit(a, "-n", "1", "-t", "50", "--wrap=sleep 300")
    a.c.wait_for(lambda: a.reason(second) == "QOSGrpCPURunMinutesLimit",
                 "QOSGrpCPURunMinutesLimit")
    third = submit(a, "-n", "1", "-t", "30", "--wrap=sleep 300")
    a.c.wait_job(third, "RUNNING")
    a.c.run("scancel", str(first), check=True)
    a.c.wait_job(second, "RUNNING")


def test_sshare_grp_tres_mins(acct):
    """sshare -l shows each association's GrpTRESMins as sshare 22.05.8 does
    (TRES in Slurm's order, memory in MiB)."""
    a = acct()
    a.mgr("add", "account", "phys", "grptresmins=gres/gpu=5,mem=2G,cpu=100")
    a.add_user("phys", "grptresmins=node=7")
    a.c.start()
    a.wait_loaded()
    p = a.c.run("sshare", "-l", "-P", "-a")
    assert p.returncode == 0, p.stderr
    rows = [l.split("|") for l in p.stdout.splitlines()]
    col = rows[0].index("GrpTRESMins")
    got = {(r[0].strip(), r[1]): r[col] for r in rows[1:]}
    assert got[("phys", "")] == "cpu=100,mem=2048,gres/gpu=5"
    assert got[("phys", a.c.user)] == "node=7"
    assert got[("root", "")] == ""
