"""Job dependencies (issue 6; CLI_SPEC §1 -d/--dependency, §4.3, §9).

The stored form, the reasons and the errors are those slurmctld 22.05 shows
on a one-host Slurm (bench/slurm_local.sh): "afterok:16(unfulfilled)",
met terms dropped, "(failed)" with DependencyNeverSatisfied, a whole array
named "21_*", and "Job dependency problem" for a bad text.
"""
import time


def sbatch(cluster, *args):
    p = cluster.run("sbatch", "--parsable", *args, check=True)
    return int(p.stdout.strip())


def show(cluster, job):
    """(JobState, Reason, Dependency) from scontrol show job."""
    out = cluster.run("scontrol", "show", "job", str(job), "-o", check=True).stdout
    kv = dict(w.split("=", 1) for w in out.split() if "=" in w)
    return kv["JobState"], kv["Reason"], kv["Dependency"]


def wait_show(cluster, job, want):
    got = {}

    def ok():
        got["v"] = show(cluster, job)
        return got["v"] == want
    cluster.wait_for(ok, "job %d to show %s (last %s)" % (job, want, got.get("v")))


def test_seed004_chain_and_multi(cluster):
    """The seed 004 chain: sbatch --parsable, then --dependency=afterok:$job1."""
    j1 = sbatch(cluster, "--wrap", "sleep 1")
    j2 = sbatch(cluster, "--dependency=afterok:%d" % j1, "--wrap", "true")
    # waiting shows from the submission on, before any scheduling pass (slurmctld 22.05)
    assert show(cluster, j2) == ("PENDING", "Dependency", "afterok:%d(unfulfilled)" % j1)
    j3 = sbatch(cluster, "--dependency=afterok:%d" % j2, "--wrap", "true")
    many = sbatch(cluster, "--dependency=afterok:%d:%d:%d" % (j1, j2, j3), "--wrap", "true")
    assert show(cluster, many)[2] == ("afterok:%d(unfulfilled),afterok:%d(unfulfilled),"
                                      "afterok:%d(unfulfilled)" % (j1, j2, j3))
    st = cluster.run("squeue", "-h", "-j", str(j3), "-o", "%t %r %E").stdout.split()
    assert st == ["PD", "Dependency", "afterok:%d(unfulfilled)" % j2]
    rec = cluster.wait_job(many, "COMPLETED")
    starts = [cluster.job(j)["start_time"] for j in (j1, j2, j3)]
    assert starts == sorted(starts) and rec["start_time"] >= starts[2]
    assert show(cluster, many) == ("COMPLETED", "None", "(null)")


def test_failed_any_and_kill(cluster):
    bad = sbatch(cluster, "-H", "--wrap", "exit 3")
    good = sbatch(cluster, "-H", "--wrap", "true")
    ok_all = sbatch(cluster, "--dependency=afterok:%d:%d" % (bad, good), "--wrap", "true")
    either = sbatch(cluster, "--dependency=afterok:%d?afternotok:%d" % (bad, good), "--wrap", "true")
    notok = sbatch(cluster, "--dependency=afternotok:%d" % bad, "--wrap", "true")
    anyend = sbatch(cluster, "--dependency=afterany:%d,afterany:%d" % (bad, good), "--wrap", "true")
    killed = sbatch(cluster, "--dependency=afterok:%d" % bad, "--kill-on-invalid-dep=yes",
                    "--wrap", "true")
    cluster.run("scontrol", "release", str(bad), str(good), check=True)
    wait_show(cluster, ok_all, ("PENDING", "DependencyNeverSatisfied", "afterok:%d(failed)" % bad))
    wait_show(cluster, either, ("PENDING", "DependencyNeverSatisfied",
                                "afterok:%d(failed)?afternotok:%d(failed)" % (bad, good)))
    cluster.wait_job(notok, "COMPLETED")
    cluster.wait_job(anyend, "COMPLETED")
    cluster.wait_job(killed, "CANCELLED")
    assert show(cluster, killed) == ("CANCELLED", "DependencyNeverSatisfied",
                                     "afterok:%d(failed)" % bad)
    # a job no longer (or never) in the table counts as met, as in Slurm
    gone = sbatch(cluster, "--dependency=afterok:424242", "--wrap", "true")
    cluster.wait_job(gone, "COMPLETED")


def test_after_delay_and_singleton(cluster):
    first = sbatch(cluster, "-J", "solo", "--wrap", "sleep 2")
    cluster.wait_job(first, "RUNNING")
    after = sbatch(cluster, "--dependency=after:%d" % first, "--wrap", "true")
    later = sbatch(cluster, "--dependency=after:%d+5:%d" % (first, after), "--wrap", "true")
    solo = sbatch(cluster, "-J", "solo", "--dependency=singleton", "--wrap", "true")
    cluster.wait_job(after, "COMPLETED")
    # the delay carries to the ids after it, as in Slurm
    assert show(cluster, later)[1:] == (
        "Dependency", "after:%d+5(unfulfilled),after:%d+5(unfulfilled)" % (first, after))
    assert cluster.state_of(cluster.job(solo)) == "PENDING"
    assert show(cluster, solo)[2] == "singleton(unfulfilled)"
    # a newer held job of the same name does not hold it back (slurmctld 22.05)
    held = sbatch(cluster, "-H", "-J", "solo", "--wrap", "true")
    rec = cluster.wait_job(solo, "COMPLETED")
    assert rec["start_time"] >= cluster.job(first)["end_time"]
    cluster.run("scancel", str(later), str(held), check=True)


def test_arrays_and_tasks(cluster):
    arr = sbatch(cluster, "-H", "--array=0-3", "--wrap", "exit $((SLURM_ARRAY_TASK_ID % 2))")
    whole = sbatch(cluster, "--dependency=afterok:%d" % arr, "--wrap", "true")
    task2 = sbatch(cluster, "--dependency=afterok:%d_2" % arr, "--wrap", "true")
    notok = sbatch(cluster, "--dependency=afternotok:%d" % arr, "--wrap", "true")
    corr = sbatch(cluster, "--array=0-3", "--dependency=aftercorr:%d" % arr, "--wrap", "true")
    assert show(cluster, whole)[2] == "afterok:%d_*(unfulfilled)" % arr
    assert show(cluster, task2)[2] == "afterok:%d_2(unfulfilled)" % arr
    cluster.run("scontrol", "release", str(arr), check=True)
    cluster.wait_job(task2, "COMPLETED")
    cluster.wait_job(notok, "COMPLETED")
    wait_show(cluster, whole, ("PENDING", "DependencyNeverSatisfied", "afterok:%d_*(failed)" % arr))

    def corr_states():
        recs = cluster.rpc("job.info", job_ids=[corr])["jobs"]
        return {r.get("array_task_id"): (cluster.state_of(r), r["reason"]) for r in recs}
    cluster.wait_for(lambda: corr_states() == {
        0: ("COMPLETED", "None"), 1: ("PENDING", "DependencyNeverSatisfied"),
        2: ("COMPLETED", "None"), 3: ("PENDING", "DependencyNeverSatisfied")}, "aftercorr")
    cluster.run("scancel", str(corr), str(whole), check=True)


def test_update_and_errors(cluster):
    held = sbatch(cluster, "-H", "--wrap", "true")
    job = sbatch(cluster, "--dependency=afterok:%d" % held, "--wrap", "true")
    p = cluster.run("scontrol", "update", "jobid=%d" % job, "Dependency=foo:1")
    assert p.returncode == 1 and p.stderr == "Job dependency problem for job %d\n" % job
    p = cluster.run("scontrol", "update", "jobid=%d" % job, "Dependency=afterok:%d" % job)
    assert p.returncode == 1 and p.stderr == "Job dependency problem for job %d\n" % job
    cluster.run("scontrol", "update", "jobid=%d" % job, "Dependency=afterany:%d" % held,
                check=True)
    assert show(cluster, job)[2] == "afterany:%d(unfulfilled)" % held
    cluster.run("scontrol", "update", "jobid=%d" % job, "Dependency=", check=True)
    cluster.wait_job(job, "COMPLETED")
    for bad in ("foo:1", "afterok:abc", "afterok", "afterok:1?", "afterok:1,", "after:0",
                "after:1+x"):
        p = cluster.run("sbatch", "--dependency=" + bad, "--wrap", "true")
        assert p.returncode == 1, bad
        assert p.stderr == ("sbatch: error: Batch job submission failed: "
                            "Job dependency problem\n"), (bad, p.stderr)
    cluster.run("scancel", str(held), check=True)


def test_failed_state_survives_restart(make_cluster):
    """A term found failed stays failed after the job it named is purged and the
    controller restarts (the stored form is journaled)."""
    cluster = make_cluster(conf_extra="MinJobAge=1")
    bad = sbatch(cluster, "--wrap", "exit 1")
    dep = sbatch(cluster, "--dependency=afterok:%d" % bad, "--wrap", "true")
    wait_show(cluster, dep, ("PENDING", "DependencyNeverSatisfied", "afterok:%d(failed)" % bad))
    cluster.wait_for(lambda: cluster.job(bad) is None, "job %d purged" % bad)
    time.sleep(0.5)
    cluster.kill_ctld()
    cluster.start_ctld()
    wait_show(cluster, dep, ("PENDING", "DependencyNeverSatisfied", "afterok:%d(failed)" % bad))
