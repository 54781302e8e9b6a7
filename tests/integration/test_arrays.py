"""Job arrays (issue 6; CLI_SPEC §0.5, §1 --array, §4, §6, §9, §12).

Behaviour checked against slurmctld 22.05 on a one-host Slurm
(bench/slurm_local.sh): an array is one record until its tasks start; each
task split off to run gets a new job id and the master id stays with the
last task; squeue folds pending tasks ("12_[2-5%2]") and -r unfolds them;
scancel/scontrol take 12, 12_3, 12_[1-3] and 12_*.
"""
import os
import time

from conftest import BIN
from test_acct_link import acct_beside  # loomdbd beside a cluster


def sbatch(cluster, *args, script=None):
    p = cluster.run("sbatch", "--parsable", *args, input=script, check=True)
    return int(p.stdout.strip().split(";")[0])


def squeue(cluster, *args):
    return cluster.run("squeue", "-h", *args, check=True).stdout


def lines(text):
    return [l.split() for l in text.splitlines() if l.strip()]


def records(cluster, array_id):
    """Every record of the array (job.info by master id)."""
    return cluster.rpc("job.info", job_ids=[array_id])["jobs"]


def wait_done(cluster, array_id, ntasks, timeout=60):
    def done():
        recs = records(cluster, array_id)
        return (len(recs) == ntasks and
                all(cluster.state_of(r) in ("COMPLETED", "FAILED", "CANCELLED") and
                    "COMPLETING" not in r["state"] for r in recs))
    cluster.wait_for(done, "array %d to finish" % array_id, timeout)
    return records(cluster, array_id)


ENV_SCRIPT = """#!/bin/sh
echo "$SLURM_JOB_ID $SLURM_ARRAY_JOB_ID $SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_COUNT \
$SLURM_ARRAY_TASK_MIN $SLURM_ARRAY_TASK_MAX $SLURM_ARRAY_TASK_STEP"
"""


def test_tasks_env_and_default_output(cluster):
    a = sbatch(cluster, "--array=1-5:2,8", script=ENV_SCRIPT)
    recs = wait_done(cluster, a, 4)
    assert sorted(r["array_task_id"] for r in recs) == [1, 3, 5, 8]
    assert all(r["array_job_id"] == a for r in recs)
    by_task = {r["array_task_id"]: r["job_id"] for r in recs}
    for task in (1, 3, 5, 8):
        out = (cluster.work / ("slurm-%d_%d.out" % (a, task))).read_text().split()
        # the step of the first "a-b:s" element, as sbatch 22.05.8 sets it
        assert out == [str(by_task[task]), str(a), str(task), "4", "1", "8", "2"], out
    # the master id ends with the last task started (Slurm 22.05)
    assert by_task[8] == a and len(set(by_task.values())) == 4


def test_file_patterns(cluster):
    a = sbatch(cluster, "--array=0-1", "-o", "out_%A_%a.txt", "-e", "err_%A-%4a.txt",
               "--wrap", "echo hi; echo oops >&2")
    wait_done(cluster, a, 2)
    for t in (0, 1):
        assert (cluster.work / ("out_%d_%d.txt" % (a, t))).read_text() == "hi\n"
        assert (cluster.work / ("err_%d-%04d.txt" % (a, t))).read_text() == "oops\n"


def test_one_record_until_tasks_start(make_cluster):
    """--array=0-99999 costs one record and one journal entry."""
    cluster = make_cluster(conf_extra="MaxArraySize=100000")
    # Job entries only: the nodes' registration entries may reach the file
    # (group commit) after the nodes already show IDLE.
    journal = lambda: sum(1 for p in cluster.state.glob("journal.*")
                          for line in p.read_bytes().splitlines()
                          if b'"ev":"node.' not in line)
    before = journal()
    a = sbatch(cluster, "-H", "--array=0-99999", "--wrap", "true")
    recs = records(cluster, a)
    assert len(recs) == 1 and recs[0]["array_task_str"] == "0-99999"
    assert journal() - before == 1
    assert lines(squeue(cluster)) == [[
        "%d_[0-99999]" % a, "debug", "wrap", cluster.user[:8], "PD", "0:00", "1",
        "(JobHeldUser)"]]
    out = squeue(cluster, "-r", "-o", "%i %A %K")
    assert len(out.splitlines()) == 100000
    assert out.splitlines()[0] == "%d_0 %d 0" % (a, a)
    assert out.splitlines()[-1] == "%d_99999 %d 99999" % (a, a)
    assert lines(squeue(cluster, "-j", "%d_77777" % a, "-o", "%i %T")) == [
        ["%d_77777" % a, "PENDING"]]


def test_max_array_size(make_cluster):
    c = make_cluster(conf_extra="MaxArraySize=10")
    p = c.run("sbatch", "--array=0-10", "--wrap", "true")
    assert p.returncode == 1
    assert p.stderr == ("sbatch: error: Batch job submission failed: "
                        "Invalid job array specification\n")
    assert c.jobs() == {}
    # a malformed spec reads the same (sbatch 22.05 leaves the check to slurmctld)
    for bad in ("5-1", "0-4:0", "x"):
        p = c.run("sbatch", "--array=" + bad, "--wrap", "true")
        assert (p.returncode, p.stderr) == (1, "sbatch: error: Batch job submission failed: "
                                               "Invalid job array specification\n"), bad
    assert c.run("sbatch", "--array=5-9", "--wrap", "true").returncode == 0


def test_throttle(cluster):
    a = sbatch(cluster, "--array=0-5%2", "--wrap", "sleep 1")
    most = 0
    seen_limit = False
    deadline = time.time() + 60
    while time.time() < deadline:
        recs = records(cluster, a)
        running = [r for r in recs if cluster.state_of(r) == "RUNNING"]
        most = max(most, len(running))
        meta = [r for r in recs if r.get("array_task_str")]
        seen_limit = seen_limit or any(r["reason"] == "JobArrayTaskLimit" for r in meta)
        if len(recs) == 6 and all(cluster.state_of(r) == "COMPLETED" for r in recs):
            break
        time.sleep(0.1)
    assert most == 2 and seen_limit
    assert sorted(r["array_task_id"] for r in records(cluster, a)) == list(range(6))


def test_throttle_changed_at_run_time(cluster):
    a = sbatch(cluster, "--array=0-7%1", "--wrap", "sleep 30")
    cluster.wait_for(lambda: lines(squeue(cluster, "-o", "%i %t"))[0] ==
                     ["%d_[1-7%%1]" % a, "PD"], "throttled line")
    show = cluster.run("scontrol", "show", "job", str(a), check=True).stdout
    assert "ArrayTaskId=1-7%1 ArrayTaskThrottle=1 " in show
    show = cluster.run("scontrol", "show", "job", "%d_5" % a, check=True).stdout
    assert "JobId=%d ArrayJobId=%d ArrayTaskId=5 ArrayTaskThrottle=1 " % (a, a) in show
    cluster.run("scontrol", "update", "jobid=%d" % a, "ArrayTaskThrottle=4", check=True)
    cluster.wait_for(lambda: sum(1 for r in records(cluster, a)
                                 if cluster.state_of(r) == "RUNNING") == 4, "4 running")
    assert "%d_[4-7%%4]" % a in squeue(cluster, "-o", "%i")
    cluster.run("scancel", str(a), check=True)
    # on a job that is no array: accepted and ignored, as slurmctld 22.05 does
    plain = sbatch(cluster, "-H", "--wrap", "true")
    p = cluster.run("scontrol", "update", "jobid=%d" % plain, "ArrayTaskThrottle=2")
    assert (p.returncode, p.stdout, p.stderr) == (0, "", "")
    cluster.run("scancel", str(plain), check=True)


def test_scancel_forms(cluster):
    a = sbatch(cluster, "-H", "--array=0-9", "--wrap", "true")
    cluster.run("scancel", "%d_3" % a, check=True)
    cluster.run("scancel", "%d_[5-6,9]" % a, check=True)
    assert lines(squeue(cluster, "-o", "%i %t")) == [["%d_[0-2,4,7-8]" % a, "PD"]]
    # tasks already gone (or never there) are not an error with the plain
    # SIGKILL: scancel 22.05.8 prints nothing and exits 0
    for gone in ("%d_3" % a, "%d_[5-6,50-60]" % a, "%d_77" % a):
        p = cluster.run("scancel", gone)
        assert (p.returncode, p.stderr) == (0, ""), (gone, p.stderr)
    assert lines(squeue(cluster, "-o", "%i %t")) == [["%d_[0-2,4,7-8]" % a, "PD"]]
    # one held task split off and cancelled alone; then the whole array
    b = sbatch(cluster, "--array=0-3", "--wrap", "sleep 30")
    cluster.wait_for(lambda: sum(1 for r in records(cluster, b)
                                 if cluster.state_of(r) == "RUNNING") == 4, "running")
    cluster.run("scancel", "%d_2" % b, check=True)
    cluster.wait_for(lambda: [r["array_task_id"] for r in records(cluster, b)
                              if cluster.state_of(r) == "CANCELLED"] == [2], "2 cancelled")
    cluster.run("scancel", "%d_*" % b, check=True)
    cluster.run("scancel", str(a), check=True)
    cluster.wait_for(lambda: squeue(cluster) == "", "queue empty")
    assert {cluster.state_of(r) for r in records(cluster, b)} == {"CANCELLED"}
    p = cluster.run("scontrol", "hold", "99999_3")
    assert p.returncode == 1 and p.stderr == "99999_3: Invalid job id specified\n"


def test_hold_release_update_tasks(cluster):
    a = sbatch(cluster, "-H", "--array=0-9%4", "--wrap", "sleep 30")
    # an update of one pending task splits it off with its own id
    cluster.run("scontrol", "update", "jobid=%d_3" % a, "TimeLimit=7", check=True)
    recs = {r.get("array_task_id"): r for r in records(cluster, a)}
    assert recs[3]["job_id"] != a and recs[3]["time_limit"] == 7
    assert recs[None]["array_task_str"] == "0-2,4-9%4" and recs[None]["time_limit"] != 7
    # folded back into the array's line without -r (as Slurm's squeue does)
    assert lines(squeue(cluster, "-o", "%i %A %r")) == [["%d_[0-9]" % a, str(a), "JobHeldUser"]]
    assert sorted(lines(squeue(cluster, "-r", "-o", "%i %A"))) == sorted(
        [["%d_%d" % (a, t), str(a)] for t in (0, 1, 2)] +
        [["%d_3" % a, str(recs[3]["job_id"])]] +
        [["%d_%d" % (a, t), str(a)] for t in range(4, 10)])
    cluster.run("scontrol", "release", "%d_3" % a, check=True)
    cluster.wait_for(lambda: cluster.state_of(cluster.job(recs[3]["job_id"])) == "RUNNING",
                     "task 3 running")
    # the whole array: every record
    cluster.run("scontrol", "update", "jobid=%d" % a, "TimeLimit=9", check=True)
    assert {r["time_limit"] for r in records(cluster, a)} == {9}
    cluster.run("scontrol", "release", str(a), check=True)
    cluster.wait_for(lambda: sum(1 for r in records(cluster, a)
                                 if cluster.state_of(r) == "RUNNING") == 4, "4 running")
    cluster.run("scancel", str(a), check=True)


def test_restart_keeps_the_array(cluster):
    a = sbatch(cluster, "--array=0-9%2", "--wrap", "sleep 1")
    cluster.wait_for(lambda: len(records(cluster, a)) >= 4, "tasks split off")
    cluster.kill_ctld()
    cluster.start_ctld()
    recs = wait_done(cluster, a, 10)
    assert sorted(r["array_task_id"] for r in recs) == list(range(10))
    assert len({r["job_id"] for r in recs}) == 10
    for t in range(10):
        assert (cluster.work / ("slurm-%d_%d.out" % (a, t))).exists()


def test_some_named_tasks_missing(cluster):
    """scontrol on a task set of which only part exists: slurmctld 22.05 acts
    on the part that exists, and scontrol reports both parts and exits 1."""
    a = sbatch(cluster, "-H", "--array=0-9", "--wrap", "true")
    p = cluster.run("scontrol", "update", "jobid=%d_[5,6,20]" % a, "Name=zz")
    assert p.returncode == 1
    assert p.stderr == "%d_5-6: No error\n%d_20: Invalid job id specified\n" % (a, a)
    p = cluster.run("scontrol", "hold", "%d_[1,3-4,12-13]" % a)
    assert p.returncode == 1
    assert p.stderr == "%d_1,3-4: No error\n%d_12-13: Invalid job id specified\n" % (a, a)
    names = {r["array_task_id"]: (r["name"], r["reason"]) for r in records(cluster, a)
             if r.get("array_task_id") is not None}
    assert names[5] == names[6] == ("zz", "JobHeldUser")
    assert names[1] == names[3] == names[4] == ("wrap", "JobHeldAdmin")
    # nothing of the set there: one line, the set without brackets
    for cmd in (["hold", "%d_[40-50]" % a], ["update", "jobid=%d_[40-50]" % a, "Name=x"]):
        p = cluster.run("scontrol", *cmd)
        assert (p.returncode, p.stderr) == (1, "%d_40-50: Invalid job id specified\n" % a)
    cluster.run("scancel", str(a), check=True)
    # scancel with a signal: one error per missing task (the plain kill is quiet)
    b = sbatch(cluster, "--array=0-1", "--wrap", "sleep 30")
    cluster.wait_for(lambda: sum(1 for r in records(cluster, b)
                                 if cluster.state_of(r) == "RUNNING") == 2, "running")
    p = cluster.run("scancel", "-s", "CONT", "%d_[1-3]" % b)
    assert p.returncode == 1
    assert p.stderr == "".join("scancel: error: Kill job error on job id %d_%d: Invalid job id "
                               "specified\n" % (b, t) for t in (2, 3))
    p = cluster.run("scancel", "%d_[1-3]" % b)
    assert (p.returncode, p.stderr) == (0, "")
    cluster.run("scancel", str(b), check=True)


def test_single_index_array_stays_folded(make_cluster):
    """An array whose meta record came down to one index without a split
    shows as the array, as slurmctld 22.05.8 shows it (checked side by side
    with bench/slurm_local.sh and slurmdbd_local.sh): `--array=3` pends as
    "N_[3]" in squeue and sacct, "5%1" keeps its throttle ("N_[5%1]", %K
    "5%1", ArrayTaskId=5%1), scancel of one of two pending indexes leaves
    "N_[9]"; -r, -j N_3 and scontrol show job N_3 name the task. A split
    (a task started or updated on its own) leaves its last index a plain
    task ("N_2"), and so does running: sacct shows the finished job as N_3."""
    with acct_beside(make_cluster, cpus=8, gpus=0) as (c, dbd):
        one = sbatch(c, "-H", "--array=3", "--wrap", "true")
        thr = sbatch(c, "-H", "--array=5%1", "--wrap", "true")
        two = sbatch(c, "-H", "--array=7,9", "--wrap", "true")
        c.run("scancel", "%d_7" % two, check=True)
        split = sbatch(c, "-H", "--array=1-2", "--wrap", "true")
        c.run("scontrol", "update", "jobid=%d_1" % split, "Nice=10", check=True)

        def check():
            assert sorted(lines(squeue(c, "-o", "%i %F %K"))) == sorted([
                ["%d_[3]" % one, str(one), "3"], ["%d_[5%%1]" % thr, str(thr), "5%1"],
                ["%d_[9]" % two, str(two), "9"], ["%d_1" % split, str(split), "1"],
                ["%d_2" % split, str(split), "2"]])
            assert lines(squeue(c, "-r", "-j", str(one), "-o", "%i %K")) == [
                ["%d_3" % one, "3"]]
            assert lines(squeue(c, "-j", "%d_3" % one, "-o", "%i")) == [["%d_3" % one]]
            show = c.run("scontrol", "show", "job", str(thr), check=True).stdout
            assert show.startswith("JobId=%d ArrayJobId=%d ArrayTaskId=5%%1 "
                                   "ArrayTaskThrottle=1 JobName=wrap" % (thr, thr)), show
            show = c.run("scontrol", "show", "job", "%d_5" % thr, check=True).stdout
            assert "ArrayTaskId=5 ArrayTaskThrottle=1 " in show, show
            show = c.run("scontrol", "show", "job", str(one), check=True).stdout
            assert "ArrayTaskId=3 JobName" in show, show

        check()
        c.kill_ctld()
        c.start_ctld()
        check()
        want = {str(one): "%d_[3]" % one, str(thr): "%d_[5%%1]" % thr,
                str(two): "%d_[9]" % two}

        def sacct_ids():  # by id: a window leaves held jobs out (eligible Unknown), as 22.05
            p = c.run("sacct", "-n", "-P", "-X", "-S", "2000-01-01", "-o", "JobIDRaw,JobID",
                      "-j", "%d,%d,%d" % (one, thr, two))
            return dict(l.split("|") for l in p.stdout.splitlines() if l)
        c.wait_for(lambda: all(sacct_ids().get(k) == v for k, v in want.items()),
                   "the pending arrays in sacct", timeout=60)
        c.run("scontrol", "release", str(one), check=True)
        c.wait_for(lambda: sacct_ids().get(str(one)) == "%d_3" % one
                   and c.state_of(c.job(one)) == "COMPLETED", "the task's record", timeout=60)
        assert squeue(c, "-j", str(one), "-o", "%i") in ("", "%d_3\n" % one)


def test_sacct_array_task_selection(make_cluster):
    """sacct -j on arrays as sacct 22.05 (checked side by side with
    bench/slurmdbd_local.sh): a pending array never started ("N_[1-5]", or
    "N_[3]" folded) is selected by N but not by N_3 (header only, exit 0);
    -j N_[3] is a fatal 'Bad job array element specified'. A task requeued
    after it ran keeps its run as a REQUEUED record (with its batch step)
    beside the new run; without -D only the latest run is shown."""
    with acct_beside(make_cluster, cpus=8, gpus=0) as (c, dbd):
        held = sbatch(c, "-H", "--array=1-5", "--wrap", "true")
        one = sbatch(c, "-H", "--array=3", "--wrap", "true")
        ran = sbatch(c, "--array=1-3", "-o", "/dev/null", "--wrap", "true")
        wait_done(c, ran, 3)

        def sacct(*args, rc=0):
            p = c.run("sacct", "-n", "-P", "-S", "2000-01-01", "-o", "JobID,State", *args)
            assert p.returncode == rc, p.stderr
            return p
        c.wait_for(lambda: sacct("-j", str(held)).stdout == "%d_[1-5]|PENDING\n" % held
                   and sacct("-j", str(one)).stdout == "%d_[3]|PENDING\n" % one,
                   "the pending arrays in sacct", timeout=60)
        assert sacct("-j", "%d_3" % held).stdout == ""
        assert sacct("-j", "%d_3" % one).stdout == ""
        assert sacct("-j", "%d_3,%d_2" % (one, ran), "-X").stdout == "%d_2|COMPLETED\n" % ran
        p = sacct("-j", "%d_[3]" % one, rc=1)
        assert p.stderr == "sacct: fatal: Bad job array element specified: %d\n" % one
        c.wait_for(lambda: "%d_3|COMPLETED" % ran in sacct("-j", str(ran), "-X").stdout,
                   "the tasks in sacct", timeout=60)
        time.sleep(1.5)  # the rerun's submit time is the requeue's: a new record
        c.run("scontrol", "requeue", "%d_2" % ran, check=True)
        rerun = ["%d_2|COMPLETED" % ran, "%d_2.batch|COMPLETED" % ran]
        c.wait_for(lambda: sacct("-j", "%d_2" % ran).stdout.splitlines() == rerun,
                   "the requeued task's second run", timeout=60)
        first = ["%d_2|REQUEUED" % ran, "%d_2.batch|COMPLETED" % ran]
        assert sacct("-j", "%d_2" % ran, "-D").stdout.splitlines() == first + rerun
        assert sacct("-j", str(ran), "-D", "-X").stdout.splitlines() == [
            "%d_1|COMPLETED" % ran, "%d_2|REQUEUED" % ran, "%d_3|COMPLETED" % ran,
            "%d_2|COMPLETED" % ran]
        assert sacct("-j", str(ran), "-X").stdout.splitlines() == [
            "%d_1|COMPLETED" % ran, "%d_3|COMPLETED" % ran, "%d_2|COMPLETED" % ran]
