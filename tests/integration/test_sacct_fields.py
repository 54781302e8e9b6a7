"""sacct's fields as sacct 22.05.8 has them, side by side with a one-host
Slurm (bench/slurmdbd_local.sh): --helpformat lists the same 109 names in its
layout; every field prints with -o on jobs, batch and srun steps (usage from
the step supervisors: TRESUsageIn*, AveDiskRead, MinCPU, ...); a job
submitted with a future --begin shows reason BeginTime at once; an array's
record of its pending tasks comes after its tasks. Against loomdbd on SQLite,
and PostgreSQL when LOOM_TEST_PGSQL is set."""
import re
import time

import pytest

from dbd_util import BACKENDS
from test_acct_link import acct_beside

NAMES_2205 = """
    Account AdminComment AllocCPUS AllocNodes AllocTRES AssocID AveCPU AveCPUFreq AveDiskRead
    AveDiskWrite AvePages AveRSS AveVMSize BlockID Cluster Comment Constraints ConsumedEnergy
    ConsumedEnergyRaw Container CPUTime CPUTimeRAW DBIndex DerivedExitCode Elapsed ElapsedRaw
    Eligible End ExitCode Flags GID Group JobID JobIDRaw JobName Layout MaxDiskRead
    MaxDiskReadNode MaxDiskReadTask MaxDiskWrite MaxDiskWriteNode MaxDiskWriteTask MaxPages
    MaxPagesNode MaxPagesTask MaxRSS MaxRSSNode MaxRSSTask MaxVMSize MaxVMSizeNode
    MaxVMSizeTask McsLabel MinCPU MinCPUNode MinCPUTask NCPUS NNodes NodeList NTasks
    Partition Priority QOS QOSRAW Reason ReqCPUFreq ReqCPUFreqGov ReqCPUFreqMax ReqCPUFreqMin
    ReqCPUS ReqMem ReqNodes ReqTRES Reservation ReservationId Reserved ResvCPU ResvCPURAW
    Start State Submit SubmitLine Suspended SystemComment SystemCPU Timelimit TimelimitRaw
    TotalCPU TRESUsageInAve TRESUsageInMax TRESUsageInMaxNode TRESUsageInMaxTask
    TRESUsageInMin TRESUsageInMinNode TRESUsageInMinTask TRESUsageInTot TRESUsageOutAve
    TRESUsageOutMax TRESUsageOutMaxNode TRESUsageOutMaxTask TRESUsageOutMin
    TRESUsageOutMinNode TRESUsageOutMinTask TRESUsageOutTot UID User UserCPU WCKey WCKeyID
    WorkDir
""".split()

# the first line of sacct -l, as 22.05.8 prints it
LONG_HEADER_2205 = ('JobID        JobIDRaw        JobName  Partition  MaxVMSize  MaxVMSizeNod'
                    'e  MaxVMSizeTask  AveVMSize     MaxRSS MaxRSSNode MaxRSSTask     AveRSS '
                    'MaxPages MaxPagesNode   MaxPagesTask   AvePages     MinCPU MinCPUNode Mi'
                    'nCPUTask     AveCPU   NTasks  AllocCPUS    Elapsed      State ExitCode A'
                    'veCPUFreq ReqCPUFreqMin ReqCPUFreqMax ReqCPUFreqGov     ReqMem ConsumedE'
                    'nergy  MaxDiskRead MaxDiskReadNode MaxDiskReadTask    AveDiskRead MaxDis'
                    'kWrite MaxDiskWriteNode MaxDiskWriteTask   AveDiskWrite    ReqTRES  Allo'
                    'cTRES TRESUsageInAve TRESUsageInMax TRESUsageInMaxNode TRESUsageInMaxTas'
                    'k TRESUsageInMin TRESUsageInMinNode TRESUsageInMinTask TRESUsageInTot TR'
                    'ESUsageOutMax TRESUsageOutMaxNode TRESUsageOutMaxTask TRESUsageOutAve TR'
                    'ESUsageOutTot ')


def sbatch(c, *args):
    return c.run("sbatch", "--parsable", "-o", "/dev/null", *args,
                 check=True).stdout.strip().split(";")[0]


def test_helpformat_is_2205(make_cluster):
    c = make_cluster(start=False)
    p = c.run("sacct", "--helpformat")
    assert p.returncode == 0 and p.stdout.split() == NAMES_2205, p.stdout
    lines = p.stdout.split("\n")
    assert lines[0] == "".join("%-19s%s" % (n, " " if i < 3 else "")
                               for i, n in enumerate(NAMES_2205[:4])), lines[0]
    assert lines[-2] == "%-19s" % "WorkDir" and lines[-1] == ""


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_field_on_steps(make_cluster, backend):
    conf = "JobAcctGatherType=jobacct_gather/linux\nJobAcctGatherFrequency=task=1\n"
    with acct_beside(make_cluster, backend, conf, nodes=1, cpus=2, gpus=0) as (c, _):
        jid = sbatch(c, "-n2", "--wrap",
                     "srun -n2 sh -c 'head -c 3000000 /dev/urandom > /dev/null; sleep 1'")
        rows = {}

        def have():
            p = c.run("sacct", "-P", "-S", "2000-01-01", "-j", jid, "-o", ",".join(NAMES_2205))
            lines = p.stdout.splitlines()
            rows.clear()
            rows.update({l.split("|")[NAMES_2205.index("JobID")]:
                         dict(zip(NAMES_2205, l.split("|"))) for l in lines[1:]})
            return (p.returncode == 0 and lines[0].split("|") == NAMES_2205 and
                    all(rows.get(k, {}).get("State") == "COMPLETED"
                        and rows[k]["TRESUsageInTot"] for k in (jid + ".batch", jid + ".0")))
        c.wait_for(have, "the job's steps with usage in sacct (%s)" % rows, timeout=60,
                   interval=0.5)
        job, batch, step = rows[jid], rows[jid + ".batch"], rows[jid + ".0"]
        assert all(len(r) == len(NAMES_2205) for r in rows.values()), rows
        tres_in = (r"cpu=\d\d:\d\d:\d\d,energy=0,fs/disk=(\d+),mem=\d+[KMG]?,pages=0,"
                   r"vmem=\d+[KMG]?")
        m = re.fullmatch(tres_in, step["TRESUsageInTot"])
        assert m and int(m.group(1)) >= 6000000, step  # both tasks read 3 MB
        assert re.fullmatch(tres_in, step["TRESUsageInMax"]), step
        assert step["TRESUsageInMaxNode"] == ",".join(
            k + "=node1" for k in ("cpu", "energy", "fs/disk", "mem", "pages", "vmem")), step
        assert re.fullmatch(r"cpu=[01],fs/disk=[01],mem=[01],pages=0,vmem=[01]",
                            step["TRESUsageInMaxTask"]), step
        assert re.fullmatch(r"energy=0,fs/disk=\d+", step["TRESUsageOutTot"]), step
        assert re.fullmatch(r"\d+\.\d\dM", step["AveDiskRead"]), step  # 2.86M
        assert step["MaxDiskReadNode"] == step["MinCPUNode"] == "node1", step
        assert step["Layout"] == "Block" and batch["Layout"] == "Unknown", (step, batch)
        assert step["ReqCPUFreq"] == job["ReqCPUFreq"] == "Unknown" and batch["ReqCPUFreq"] == "0"
        assert re.fullmatch(r"\d\d:\d\d:\d\d", step["AveCPU"]), step
        for empty in ("TRESUsageInTot", "AveCPU", "Layout", "MinCPUNode", "AveDiskRead"):
            assert job[empty] == "", (empty, job)
        assert job["Flags"] == "SchedMain,StartRecieved" and batch["Flags"] == "", job
        # the command line as typed, words joined by blanks (argv[0] as run: a path here)
        assert job["SubmitLine"].endswith(
            "sbatch --parsable -o /dev/null -n2 --wrap srun -n2 sh -c 'head -c 3000000 "
            "/dev/urandom > /dev/null; sleep 1'"), job
        # a step's is srun's command line; the batch step has none (22.05.8)
        assert step["SubmitLine"] == "srun -n2 sh -c head -c 3000000 /dev/urandom > /dev/null; " \
            "sleep 1" and batch["SubmitLine"] == "", (step, batch)
        assert job["QOSRAW"] == "1" and step["QOSRAW"] == "", job
        ids = c.run("sacctmgr", "-n", "-P", "show", "assoc", "format=id,account,user,partition"
                    ).stdout.split()
        assert job["AssocID"] == step["AssocID"] and job["AssocID"] + "|root|root|" in ids, ids
        assert re.fullmatch(r"\d\d:\d\d:\d\d", job["Reserved"]) and job["ResvCPURAW"].isdigit()
        p = c.run("sacct", "-l", "-j", jid)
        assert p.stdout.splitlines()[0] == LONG_HEADER_2205, p.stdout
        p = c.run("sacct", "-S", "2000-01-01", "-j", jid, "-X", "-o",
                  "TRESUsageInTot,ReservationId")
        assert p.stdout.splitlines()[0] == "TRESUsageInTot Reservat ", p.stdout  # as 22.05


def test_steps_where_memory_is_not_consumable(make_cluster):
    """SelectTypeParameters=CR_Core: the job's AllocTRES has no mem, and every
    step, with --mem or not, records mem=0 (sacct 22.05.8 side by side);
    a step's SubmitLine is srun's command line."""
    with acct_beside(make_cluster, BACKENDS[0], "SelectTypeParameters=CR_Core\n", nodes=1,
                     cpus=2, gpus=0) as (c, _):
        jid = sbatch(c, "--wrap", "srun hostname; srun --mem=100M true")
        out = {}

        def have():
            p = c.run("sacct", "-P", "-n", "-j", jid, "-o", "JobID,AllocTRES,SubmitLine,State")
            out.clear()
            out.update({l.split("|")[0]: l.split("|")[1:] for l in p.stdout.splitlines()})
            return all(out.get(jid + s, [""] * 3)[2] == "COMPLETED" for s in ("", ".0", ".1"))
        c.wait_for(have, "the job and its steps in sacct (%s)" % out, timeout=60, interval=0.5)
        assert out[jid][0] == "billing=1,cpu=1,node=1", out
        assert out[jid + ".0"][:2] == ["cpu=1,mem=0,node=1", "srun hostname"], out
        assert out[jid + ".1"][:2] == ["cpu=1,mem=0,node=1", "srun --mem=100M true"], out


def test_signalled_steps_are_cancelled(make_cluster):
    """As slurmdbd 22.05 records them (side by side): a step whose status is a
    signal is CANCELLED, the batch step of a script killed by SIGKILL too (its
    job FAILED 0:9); srun's own allocation keeps the step's status (0:9), not
    srun's exit code 137."""
    with acct_beside(make_cluster, BACKENDS[0], "", nodes=1, cpus=2, gpus=0) as (c, _):
        script = sbatch(c, "--wrap", "kill -9 $$")
        inner = sbatch(c, "--wrap", "srun sh -c 'kill -9 $$'; exit 0")
        p = c.run("srun", "sh", "-c", "kill -9 $$")
        assert p.returncode == 137, p.stderr
        own = re.search(r"StepId=(\d+)\.0", p.stderr).group(1)
        want = {script: "FAILED 0:9", script + ".batch": "CANCELLED 0:9",
                inner: "COMPLETED 0:0", inner + ".batch": "COMPLETED 0:0",
                inner + ".0": "CANCELLED 0:9", own: "FAILED 0:9", own + ".0": "CANCELLED 0:9"}
        got = {}

        def have():
            out = c.run("sacct", "-P", "-n", "-j", ",".join((script, inner, own)), "-o",
                        "JobID,State,ExitCode").stdout
            got.clear()
            got.update({l.split("|")[0]: " ".join(l.split("|")[1:]) for l in out.splitlines()})
            return got == want
        c.wait_for(have, "the signalled jobs and steps in sacct (%s)" % got, timeout=60,
                   interval=0.5)


def test_reason_recorded(make_cluster):
    """sacct's Reason as slurmdbd 22.05 records it (side by side): "None" for a
    job that ran, FAILED included (scontrol says NonZeroExitCode); what a job
    waited for when it was cancelled pending, which scontrol keeps too."""
    with acct_beside(make_cluster, BACKENDS[0], "", nodes=1, cpus=2, gpus=0) as (c, _):
        failed = sbatch(c, "--wrap", "false")
        held = sbatch(c, "-H", "--wrap", "true")
        later = sbatch(c, "--begin=now+600", "--wrap", "true")
        c.wait_for(lambda: c.run("squeue", "-h", "-j", later, "-o", "%r").stdout == "BeginTime\n",
                   "BeginTime")
        c.run("scancel", held, later, check=True)
        assert "JobState=CANCELLED Reason=JobHeldUser " in c.run("scontrol", "show", "job",
                                                                  held).stdout
        want = {failed: "FAILED|None", held: "CANCELLED by 0|JobHeldUser",
                later: "CANCELLED by 0|BeginTime"}
        got = {}

        def have():
            out = c.run("sacct", "-P", "-n", "-X", "-j", ",".join(want), "-o",
                        "JobID,State,Reason").stdout
            got.clear()
            got.update({l.split("|", 1)[0]: l.split("|", 1)[1] for l in out.splitlines()})
            return got == want
        c.wait_for(have, "the reasons in sacct (%s)" % got, timeout=60, interval=0.5)


def test_begin_time_reason_at_once(make_cluster):
    c = make_cluster(nodes=1, cpus=2, gpus=0)
    jid = sbatch(c, "--begin=now+3600", "--wrap", "true")
    assert c.run("squeue", "-h", "-o", "%r", "-j", jid).stdout == "BeginTime\n"
    held = sbatch(c, "-H", "--begin=now+3600", "--wrap", "true")
    assert c.run("squeue", "-h", "-o", "%r", "-j", held).stdout == "JobHeldUser\n"
    # a dependency shows before the begin time, at once and after passes (22.05.8)
    dep = sbatch(c, "--begin=now+3600", "-d", "afterok:" + jid, "--wrap", "true")
    assert c.run("squeue", "-h", "-o", "%r", "-j", dep).stdout == "Dependency\n"
    time.sleep(2)
    assert c.run("squeue", "-h", "-o", "%r", "-j", dep).stdout == "Dependency\n"


@pytest.mark.parametrize("backend", BACKENDS)
def test_array_rows_order(make_cluster, backend):
    """22.05: tasks by task id, the record of the still pending tasks last
    ("3_0 3_1 3_2 3_3 3_[4-5]"), the next job after."""
    with acct_beside(make_cluster, backend, nodes=1, cpus=2, gpus=0) as (c, _):
        arr = sbatch(c, "-a", "0-5", "--wrap",
                     "sleep $(( SLURM_ARRAY_TASK_ID < 2 ? 0 : 60 ))")
        time.sleep(1.1)  # a later submit time
        after = sbatch(c, "--wrap", "true")
        later = sbatch(c, "--begin=now+3600", "--wrap", "true")
        want = ["%s_%d" % (arr, i) for i in range(4)] + ["%s_[4-5]" % arr]
        got = []

        def ordered():
            p = c.run("sacct", "-n", "-X", "-P", "-S", "2000-01-01", "-o", "JobID", "-j", arr)
            got[:] = p.stdout.split()
            return got == want
        c.wait_for(ordered, "the array's rows in order (%s)" % got, timeout=60, interval=0.5)
        p = c.run("sacct", "-n", "-X", "-P", "-S", "2000-01-01", "-o", "JobID")
        ids = p.stdout.split()
        assert ids[ids.index(want[0]):ids.index(want[-1]) + 1] == want, ids
        assert ids.index(after) > ids.index(want[-1]), ids
        # a job eligible after the window's end is not in it (-j shows it)
        row = "%s|PENDING|Unknown|0|StartRecieved|INVALID\n" % later
        c.wait_for(lambda: c.run("sacct", "-n", "-X", "-P", "-o",
                                 "JobID,State,Start,AllocNodes,Flags,Reserved",
                                 "-j", later).stdout == row, "the --begin job in sacct -j",
                   timeout=30, interval=0.5)
        p = c.run("sacct", "-n", "-X", "-P", "-S", "2000-01-01", "-o", "JobID")
        assert later not in p.stdout.split() and after in p.stdout.split(), p.stdout
        c.run("scancel", arr)


@pytest.mark.parametrize("backend", BACKENDS)
def test_never_eligible_jobs_out_of_windows(make_cluster, backend):
    """22.05: a held job's Eligible is Unknown and a window (-S) leaves it out;
    cancelled before it ran, its Start reads None."""
    with acct_beside(make_cluster, backend, nodes=1, cpus=2, gpus=0) as (c, _):
        held = sbatch(c, "-H", "--wrap", "true")
        ran = sbatch(c, "--wrap", "true")
        fields = ["-n", "-X", "-P", "-o", "JobID,State,Eligible,Start"]
        c.wait_for(lambda: c.run("sacct", *fields, "-j", held).stdout.startswith(
            "%s|PENDING|Unknown|Unknown" % held), "the held job in sacct -j", timeout=30,
            interval=0.5)
        c.wait_for(lambda: ran in c.run("sacct", *fields, "-S", "2000-01-01").stdout,
                   "the other job in sacct -S", timeout=30, interval=0.5)
        assert held not in c.run("sacct", *fields, "-S", "2000-01-01").stdout.split("|")
        c.run("scancel", held, check=True)
        c.wait_for(lambda: c.run("sacct", *fields, "-j", held).stdout.startswith(
            "%s|CANCELLED by 0|Unknown|None" % held), "the cancelled held job", timeout=30,
            interval=0.5)
