"""Job scripts and environments live in files under StateSaveLocation/scripts,
not in loomctld's memory (src/ctld/job_script.h): written at submission, read
back at launch, rewritten from the journal when a crash lost one, removed with
the job record; a missing or corrupt file fails the job's launch with an error
that names it, and the controller keeps serving."""
import json
import os
import pwd
import signal
import subprocess

import pytest
from conftest import BIN

SCRIPT = "#!/bin/sh\necho mark=$MARK\n"


def submit_held(c, mark, **desc):
    out = c.work / ("out-%s" % mark)
    desc.setdefault("env", ["PATH=/usr/bin:/bin", "MARK=%s" % mark])
    r = c.submit(SCRIPT, hold=True, standard_output=str(out), **desc)
    assert r["rc"] == 0, r
    return r["job_id"], out


def script_file(c, job_id):
    return c.state / "scripts" / ("job.%d" % job_id)


def release(c, *ids):
    r = c.rpc("job.release", job_ids=list(ids))
    assert r["rc"] == 0, r


def wait_output(c, out, text):
    c.wait_for(lambda: out.exists() and text in out.read_text(), "%s in %s" % (text, out),
               timeout=60)


def test_script_survives_kill_and_snapshot(make_cluster):
    c = make_cluster(nodes=1, cpus=2, gpus=0)
    j1, out1 = submit_held(c, "first")
    j2, out2 = submit_held(c, "second")
    assert script_file(c, j1).exists() and "MARK=first" in script_file(c, j1).read_text()
    # kill -9 right after the submissions; a crash may also lose a file that
    # was never fsynced: the journal entry still carries it.
    c.kill_ctld(signal.SIGKILL)
    script_file(c, j2).unlink()
    c.start_ctld()
    assert "MARK=second" in script_file(c, j2).read_text()
    # The snapshot written at recovery holds no script or environment.
    snap = c.state / "snapshot.json"
    c.wait_for(lambda: snap.exists() and '"job_id":%d' % j2 in snap.read_text(),
               "the recovery snapshot", timeout=30)
    assert "MARK=" not in snap.read_text() and "mark=" not in snap.read_text()
    # Nor the description members that job fields hold; the file has them all.
    recs = [json.loads(line) for line in snap.read_text().splitlines()]
    rec = next(r["job"] for r in recs if r.get("job", {}).get("job_id") == j1)
    assert rec["std_out"] == str(out1) and "standard_output" not in rec.get("desc", {})
    assert json.loads(script_file(c, j1).read_text())["desc"]["standard_output"] == str(out1)
    # Restored from that snapshot alone (no entry carries the scripts now).
    c.kill_ctld(signal.SIGKILL)
    c.start_ctld()
    c.wait_nodes("IDLE")
    release(c, j1, j2)
    for j in (j1, j2):
        c.wait_job(j, "COMPLETED")
    wait_output(c, out1, "mark=first")
    wait_output(c, out2, "mark=second")


def test_purge_removes_script_files(make_cluster):
    c = make_cluster(nodes=1, cpus=2, gpus=0, conf_extra="MinJobAge=2")
    j, _ = submit_held(c, "plain")
    r = c.submit(SCRIPT, array="0-2", env=["MARK=arr"], standard_output=str(c.work / "a-%a"))
    assert r["rc"] == 0, r
    arr = r["job_id"]
    assert script_file(c, arr).exists()
    assert not list((c.state / "scripts").glob("job.%d?*" % arr))  # one file per array
    release(c, j)
    c.wait_for(lambda: not c.jobs(), "every job purged after MinJobAge", timeout=60)
    c.wait_for(lambda: not script_file(c, j).exists() and not script_file(c, arr).exists(),
               "their script files removed", timeout=10)
    for i in range(3):
        assert (c.work / ("a-%d" % i)).read_text() == "mark=arr\n"
    # Files no job uses (a crash between a purge and its unlink) go at recovery.
    stray = c.state / "scripts" / "job.4242"
    stray.write_text('{"script":"","env":[]}\n')
    (c.state / "scripts" / "job.4243.tmp").write_text("torn")
    c.kill_ctld(signal.SIGKILL)
    c.start_ctld()
    assert not list((c.state / "scripts").iterdir())


def test_missing_or_corrupt_script_file(make_cluster):
    c = make_cluster(nodes=1, cpus=2, gpus=0)
    gone, _ = submit_held(c, "gone", no_requeue=True)
    bad, _ = submit_held(c, "bad", no_requeue=True)
    held, _ = submit_held(c, "held")  # requeue allowed: requeued held, as Slurm
    script_file(c, gone).unlink()
    script_file(c, bad).write_text("{not json")
    script_file(c, held).write_text('{"script":7}\n')
    release(c, gone, bad, held)
    c.wait_job(gone, "FAILED")
    c.wait_job(bad, "FAILED")
    c.wait_for(lambda: c.job(held)["reason"] == "launch failed requeued held",
               "the job requeued held", timeout=60)
    assert c.ping()
    log = (c.logdir / "loomctld.log").read_text()
    assert "job %d: its batch script file %s cannot be read" % (gone, script_file(c, gone)) in log
    assert "job %d: its batch script file %s is corrupt" % (bad, script_file(c, bad)) in log
    # The controller still runs other jobs.
    ok, out = submit_held(c, "ok")
    release(c, ok)
    c.wait_job(ok, "COMPLETED")
    wait_output(c, out, "mark=ok")


def test_scontrol_write_batch_script(make_cluster):
    c = make_cluster(nodes=1, cpus=2, gpus=0)
    j, _ = submit_held(c, "w")
    r = c.run("scontrol", "write", "batch_script", j)
    assert (r.returncode, r.stdout, r.stderr) == (
        0, "batch script for job %d written to slurm-%d.sh\n" % (j, j), "")
    assert (c.work / ("slurm-%d.sh" % j)).read_text() == SCRIPT
    r = c.run("scontrol", "write", "batch_script", j, "-")
    assert (r.returncode, r.stdout) == (0, SCRIPT)
    r = c.run("scontrol", "write", "batch_script", j, "/nonexistent/x")
    assert r.returncode != 0
    assert r.stderr == "failed to open file `/nonexistent/x`: No such file or directory\n"
    # An array's tasks share its one script, split off or not.
    arr = c.submit("#!/bin/sh\necho array\n", array="0-3", hold=True)["job_id"]
    for jid in ("%d" % arr, "%d_2" % arr):
        r = c.run("scontrol", "write", "batch_script", jid, "-")
        assert (r.returncode, r.stdout) == (0, "#!/bin/sh\necho array\n"), jid
    # Refusals, in slurmctld 22.05's words.
    alloc = c.submit("", hold=True)["job_id"]  # salloc's kind: no batch script
    script_file(c, j).unlink()
    for jid, why in (("99999", "Invalid job id specified"), ("abc", "Invalid job id specified"),
                     ("%d_9" % arr, "Invalid job id specified"),
                     ("%d" % alloc, "Job script not specified"),
                     ("%d" % j, "job %d: its batch script file %s cannot be read: "
                      "No such file or directory" % (j, script_file(c, j)))):
        r = c.run("scontrol", "write", "batch_script", jid, "-")
        assert r.returncode != 0 and r.stdout == "", jid
        assert r.stderr == "job script retrieval failed: %s\n" % why, jid
    r = c.run("scontrol", "write")
    assert (r.returncode, r.stderr) == (1, "too few arguments for keyword:write\n")
    r = c.run("scontrol", "write", "batch_script", arr, "a", "b")
    assert (r.returncode, r.stderr) == (1, "too many arguments for keyword:write\n")
    assert c.ping()


def test_write_batch_script_other_user(make_cluster):
    if os.geteuid() != 0:
        pytest.skip("needs root to run scontrol as another user")
    nobody = pwd.getpwnam("nobody")
    c = make_cluster(nodes=1, cpus=2, gpus=0)
    j, _ = submit_held(c, "secret")

    def as_nobody():
        os.setgid(nobody.pw_gid)
        os.setuid(nobody.pw_uid)

    r = subprocess.run([str(BIN / "scontrol"), "write", "batch_script", str(j), "-"],
                       env=c.env, capture_output=True, text=True, preexec_fn=as_nobody,
                       cwd="/", timeout=60)
    assert r.stdout == "" and r.returncode != 0
    assert r.stderr == "job script retrieval failed: Invalid user id\n"
