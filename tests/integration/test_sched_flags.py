"""PriorityFlags and SchedulerParameters on real daemons.

The sprio figures come from slurmctld 22.05.8 on the same configuration:
two nodes of 4 CPUs, PriorityWeightJobSize=100000, PriorityWeightPartition=1000,
PriorityFlags=SMALL_RELATIVE_TO_TIME,NO_NORMAL_PART, partitions pa
(PriorityJobFactor=7, default) and pb (3). There JOBSIZE was
(min nodes / cluster nodes) / time limit in minutes (CPUs do not count, no
time limit gives 0) and PARTITION the raw PriorityJobFactor times the weight.
"""
import time

SLEEP = "#!/bin/sh\nsleep %d\n"

FLAGS = """PriorityType=priority/multifactor
PriorityWeightJobSize=100000
PriorityWeightPartition=1000
PriorityWeightAge=0
PriorityFlags=SMALL_RELATIVE_TO_TIME,NO_NORMAL_PART"""

PARTS = ["PartitionName=pa Nodes=ALL Default=YES MaxTime=INFINITE State=UP PriorityJobFactor=7",
         "PartitionName=pb Nodes=ALL MaxTime=INFINITE State=UP PriorityJobFactor=3"]


def _cols(c, job_id):
    """sprio -l's PRIORITY, JOBSIZE and PARTITION columns of one job."""
    f = c.run("sprio", "-l", "-h", "-j", str(job_id)).stdout.split()
    return (int(f[3]), int(f[8]), int(f[9])) if len(f) >= 10 else None


def test_priority_flags_as_slurm(make_cluster):
    c = make_cluster(nodes=2, cpus=4, gpus=0, conf_extra=FLAGS, partitions=PARTS)
    for n in c.node_names:  # fill both nodes: everything after pends
        b = c.submit(SLEEP % 300, ntasks=4, time_limit=10, req_nodes=n)["job_id"]
        c.wait_job(b, "RUNNING")
    cases = [  # desc, (PRIORITY, JOBSIZE, PARTITION) as sprio -l printed them
        (dict(ntasks=1, time_limit=10), (12000, 5000, 7000)),
        (dict(ntasks=2, time_limit=10), (12000, 5000, 7000)),
        (dict(nodes=2, ntasks=2, time_limit=10), (17000, 10000, 7000)),
        (dict(nodes=2, ntasks=8, time_limit=10), (17000, 10000, 7000)),
        (dict(ntasks=4, time_limit=60), (7833, 833, 7000)),
        (dict(ntasks=1, time_limit=10, partition="pb"), (8000, 5000, 3000)),
        (dict(ntasks=1), (7000, 0, 7000)),
    ]
    ids = [(c.submit(**d)["job_id"], want) for d, want in cases]
    for job_id, want in ids:
        c.wait_for(lambda: _cols(c, job_id) == want, "sprio -l of job %d: %s" % (job_id, want))


def test_accrue_always_and_incr_only(make_cluster):
    """ACCRUE_ALWAYS: a job ages from its submission, its time behind a
    dependency included (slurm.conf(5): "despite job ineligibility due to
    either dependencies, holds or begin time"), where it would otherwise age
    from its eligibility; INCR_ONLY: a priority never goes down, a higher nice
    included. sprio lists a job once it is eligible."""
    conf = ("PriorityType=priority/multifactor\nPriorityWeightAge=60000\n"
            "PriorityMaxAge=00:01:00\nPriorityWeightJobSize=0\nPriorityWeightPartition=0\n"
            "PriorityCalcPeriod=1\nPriorityFlags=ACCRUE_ALWAYS,INCR_ONLY")
    c = make_cluster(nodes=1, cpus=2, gpus=0, conf_extra=conf)
    a, held = (c.submit(SLEEP % 300, ntasks=1)["job_id"] for _ in range(2))
    c.wait_job(a, "RUNNING")
    c.wait_job(held, "RUNNING")
    b = c.submit(SLEEP % 1, ntasks=2, dependency="afterany:%d" % a)["job_id"]
    time.sleep(6)
    c.run("scancel", str(a), check=True)  # b is eligible now, and waits for CPUs

    def sprio(j):
        f = c.run("sprio", "-l", "-h", "-j", str(j)).stdout.split()
        return (int(f[3]), int(f[5])) if len(f) >= 6 else (0, 0)
    # six seconds or more of age (1000 a second): counted from the submission
    c.wait_for(lambda: sprio(b)[1] >= 5000, "job %d aged since its submission" % b)
    before = sprio(b)[0]
    c.run("scontrol", "update", "JobId=%d" % b, "Nice=100000", check=True)
    time.sleep(2.5)  # two calculation periods
    assert sprio(b)[0] >= before, (before, sprio(b))


def test_bad_priority_flags_word(make_cluster):
    c = make_cluster(nodes=1, cpus=2, gpus=0,
                     conf_extra=FLAGS.replace("NO_NORMAL_PART", "NO_SUCH_FLAG"))
    j = c.submit(ntasks=1)["job_id"]  # the controller runs; the word is ignored
    c.wait_job(j, "COMPLETED")
    log = "".join(p.read_text() for p in c.logdir.glob("*ctld*"))
    assert "invalid PriorityFlags word 'NO_SUCH_FLAG'" in log


def test_bf_min_age_reserve(make_cluster):
    """A job younger than bf_min_age_reserve reserves nothing: a lower-priority
    job that would delay it starts at once (without the setting it waits,
    as test_sched_policy.test_backfill_starts_small_job_early shows)."""
    sp = "SchedulerParameters=bf_interval=1,bf_min_age_reserve=600," \
         "bf_yield_interval=5000,bf_yield_sleep=1000"
    c = make_cluster(nodes=1, cpus=4, gpus=0, conf_extra=sp)
    blocker = c.submit(SLEEP % 120, ntasks=2, time_limit=2)["job_id"]
    c.wait_job(blocker, "RUNNING")
    big = c.submit(SLEEP % 5, ntasks=4, time_limit=5)["job_id"]
    late = c.submit(SLEEP % 60, ntasks=2, time_limit=10)["job_id"]
    c.wait_job(late, "RUNNING", timeout=30)
    rec = c.job(big)
    assert c.state_of(rec) == "PENDING" and rec["reason"] == "Resources"
    for j in (blocker, big, late):
        c.rpc("job.signal", job_id=j, cancel=True, signal=9)


# Partition access by account and QOS, as slurmctld 22.05.8 showed it with
# AccountingStorageEnforce=associations,limits,qos: every job is accepted
# (root too) and the denied ones pend with these reasons.
POLICY_PARTS = [
    "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
    "PartitionName=pa Nodes=ALL MaxTime=INFINITE State=UP AllowAccounts=acta",
    "PartitionName=pb Nodes=ALL MaxTime=INFINITE State=UP DenyAccounts=actb",
    "PartitionName=pc Nodes=ALL MaxTime=INFINITE State=UP AllowQos=high",
    "PartitionName=pd Nodes=ALL MaxTime=INFINITE State=UP DenyQos=low"]
NOT_PERMITTED = "Job's %s not permitted to use this partition (%s)"


def test_partition_accounts_and_qos(make_cluster):
    from test_assoc_limits import AcctCluster
    a = AcctCluster(make_cluster, "sqlite", enforce="associations,limits,qos",
                    nodes=1, cpus=2, gpus=0, partitions=POLICY_PARTS)
    try:
        a.mgr("add", "qos", "high")
        a.mgr("add", "qos", "low")
        a.mgr("add", "account", "acta")
        a.mgr("add", "account", "actb")
        a.mgr("add", "user", a.c.user, "account=acta,actb", "qos=normal,high,low")
        a.mgr("modify", "user", a.c.user, "set", "defaultaccount=acta")
        a.c.start()
        a.wait_loaded()
        cases = [  # sbatch options, the reason (None: it may run)
            ("-p pa -A actb", NOT_PERMITTED % ("account", "pa allows acta not actb")),
            ("-p pb -A actb", NOT_PERMITTED % ("account", "pb denies actb including actb")),
            ("-p pc -A acta -q low", NOT_PERMITTED % ("QOS", "pc allows high not low")),
            ("-p pc -A acta", NOT_PERMITTED % ("QOS", "pc allows high not normal")),
            ("-p pd -A acta -q low", NOT_PERMITTED % ("QOS", "pd denies low including low")),
            ("-p pa -A acta", None), ("-p pb -A acta", None), ("-p pc -A acta -q high", None),
            ("-p pd -A acta -q high", None), ("-p pa,debug -A actb", None)]
        ids = []
        for opts, why in cases:
            p = a.sbatch(*opts.split(), "-n1", "--wrap=sleep 300")
            assert p.returncode == 0, (opts, p.stderr)
            ids.append((int(p.stdout.split(";")[0]), opts, why))
        for job_id, opts, why in ids:
            if why:
                a.c.wait_for(lambda: a.reason(job_id) == why, "%s: %s" % (opts, why))
            else:
                a.c.wait_for(lambda: not a.reason(job_id).startswith("Job's"), opts)
        # once the others are gone, the job naming pa and debug runs in debug
        for job_id, _, _ in ids[:-1]:
            a.c.rpc("job.signal", job_id=job_id, cancel=True, signal=9)
        rec = a.c.wait_job(ids[-1][0], "RUNNING", timeout=60)
        assert rec["partition"] == "debug"
        a.c.rpc("job.signal", job_id=ids[-1][0], cancel=True, signal=9)
    finally:
        a.close()


def test_allow_accounts_without_accounting(make_cluster):
    c = make_cluster(nodes=1, cpus=2, gpus=0, partitions=POLICY_PARTS)
    p = c.run("sbatch", "--parsable", "-p", "pa", "-A", "acta", "--wrap=true")
    assert p.returncode == 0, p.stderr
    j = int(p.stdout.split(";")[0])
    why = "Job's account not known, so it can't use this partition (pa allows acta)"
    c.wait_for(lambda: c.job(j).get("reason") == why, why)
    # DenyAccounts and the QOS lists need associations: without them they let jobs in
    for part in ("pb", "pd"):
        p = c.run("sbatch", "--parsable", "-p", part, "-A", "actb", "--wrap=true")
        c.wait_job(int(p.stdout.split(";")[0]), "COMPLETED")
    c.rpc("job.signal", job_id=j, cancel=True, signal=9)


def test_cr_socket(make_cluster):
    """SelectTypeParameters=CR_Socket: as on slurmctld 22.05.8 with a node of
    2 sockets x 4 cores, -n1 jobs get a whole socket each (NumCPUs=4,
    CPU_IDs=0-3 and 4-7), a third waits for Resources, -n5 takes both."""
    c = make_cluster(nodes=1, cpus=8, gpus=0, start=False,
                     conf_extra="SelectTypeParameters=CR_Socket")
    text = c.conf.read_text().replace("CPUs=8 ", "CPUs=8 Sockets=2 CoresPerSocket=4 "
                                      "ThreadsPerCore=1 ")
    c.conf.write_text(text)
    c.start()
    ids = [c.submit(SLEEP % 300, ntasks=1)["job_id"] for _ in range(3)]
    for j, cpus in zip(ids[:2], ("0-3", "4-7")):
        c.wait_job(j, "RUNNING")
        out = c.run("scontrol", "-d", "show", "job", str(j)).stdout
        assert "NumCPUs=4 NumTasks=1" in out and "CPU_IDs=%s " % cpus in out, out
    c.wait_for(lambda: c.job(ids[2]).get("reason") == "Resources", "Resources")
    for j in ids:
        c.rpc("job.signal", job_id=j, cancel=True, signal=9)
    big = c.submit(SLEEP % 300, ntasks=5)["job_id"]
    c.wait_job(big, "RUNNING")
    assert "NumCPUs=8 NumTasks=5" in c.run("scontrol", "show", "job", str(big)).stdout
    c.rpc("job.signal", job_id=big, cancel=True, signal=9)


def test_site_factor(make_cluster):
    """scontrol update job SiteFactor= (admins only), as on slurmctld 22.05.8:
    sprio's SITE column and the priority take it at once; out of range is
    refused by scontrol itself; a user may not set it on their own job."""
    import os
    c = make_cluster(nodes=1, cpus=2, gpus=0, conf_extra=FLAGS, partitions=PARTS)
    b = c.submit(SLEEP % 300, ntasks=2, time_limit=10)["job_id"]
    c.wait_job(b, "RUNNING")
    j = c.submit(ntasks=1, time_limit=10)["job_id"]
    c.wait_for(lambda: _cols(c, j) == (17000, 10000, 7000), "sprio before")
    p = c.run("scontrol", "update", "job", str(j), "SiteFactor=500")
    assert p.returncode == 0, p.stderr
    c.wait_for(lambda: c.run("sprio", "-h", "-o", "%i %r %Y %S").stdout.split()
               == [str(j), "pa", "17500", "500"], "SITE 500")
    assert c.run("scontrol", "update", "job", str(j), "SiteFactor=-100").returncode == 0
    c.wait_for(lambda: c.run("sprio", "-h", "-o", "%Y %S").stdout.split() == ["16900", "-100"],
               "SITE -100")
    p = c.run("scontrol", "update", "job", str(j), "SiteFactor=99999999999")
    assert p.returncode == 1
    assert p.stderr == ("scontrol: error: SiteFactor value out of range (+/- 2147483645). "
                        "Value ignored\n")
    if os.getuid() == 0:
        from test_ctld_sched import rpc_as
        mine = rpc_as(c, 65534, "job.submit", script=SLEEP % 60,
                      job={"name": "n", "work_dir": "/tmp", "hold": True, "time_limit": 5})
        r = rpc_as(c, 65534, "job.update", job_id=mine["job_id"], changes={"SiteFactor": 5})
        assert r["rc"] == "LOOM_EACCESS"
        c.rpc("job.signal", job_id=mine["job_id"], cancel=True, signal=9)
    for k in (b, j):
        c.rpc("job.signal", job_id=k, cancel=True, signal=9)
