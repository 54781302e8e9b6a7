"""loomctld -> loomdbd: job and step records reach sacct (issue 7).

A real cluster (loomctld, two loomd) with AccountingStorageType=slurmdbd and
a real loomdbd on SQLite, and on PostgreSQL when LOOM_TEST_PGSQL is set.
The acceptance test runs 500 jobs while the accounting database goes away
(SQLite: loomdbd is killed; PostgreSQL: the database refuses connections,
then loomdbd is killed too) and loomctld is killed with SIGKILL; once both
are back, sacct must list each of the 500 jobs exactly once, COMPLETED."""
import contextlib
import os
import signal
import sqlite3
import subprocess
import time

import pytest

from conftest import BIN, Daemon
from dbd_util import BACKENDS, pg_admin, pg_slurmdbd_conf
from ports import free_port


class Acct:
    """loomdbd beside a Cluster (same slurm.conf, key and StateSaveLocation)."""

    def __init__(self, cluster, backend, port):
        self.c, self.backend, self.port = cluster, backend, port
        self.dbname = None
        self.proc = None
        if backend == "pgsql":
            self.dbname = pg_slurmdbd_conf(cluster.root, "loomlink", port)

    def start(self):
        argv = [str(BIN / "loomdbd"), "-D", "-f", str(self.c.conf)]
        self.proc = Daemon("loomdbd", argv, self.c.logdir / "loomdbd.log", self.c.env)
        self.proc.start()
        sock = self.c.state / "loomdbd.sock"
        self.c.wait_for(lambda: sock.exists(), "loomdbd's socket")

    def kill(self):
        self.proc.stop(signal.SIGKILL)
        sock = self.c.state / "loomdbd.sock"
        if sock.exists():
            sock.unlink()

    def block(self, blocked):
        """PostgreSQL: refuse (or allow again) connections to the database."""
        pg_admin("ALTER DATABASE %s ALLOW_CONNECTIONS %s" % (self.dbname,
                                                           "false" if blocked else "true"))
        if blocked:
            pg_admin("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                     "WHERE datname = '%s'" % self.dbname)

    def stop(self):
        if self.proc:
            self.proc.stop()
        if self.dbname:
            pg_admin("DROP DATABASE IF EXISTS %s WITH (FORCE)" % self.dbname)


ACCT_CONF = ("AccountingStorageType=accounting_storage/slurmdbd\n"
             "AccountingStorageHost=localhost\nAccountingStoragePort=%d\n")


@contextlib.contextmanager
def acct_beside(make_cluster, backend="sqlite", conf_extra="", start=True, **kw):
    """A cluster (make_cluster's keywords) whose slurm.conf names a loomdbd on
    a free port (c.acct_port), that loomdbd started (Acct), then the cluster
    unless start=False. Yields (cluster, Acct); stops the loomdbd at the end
    (make_cluster's teardown stops the cluster)."""
    port = free_port()
    c = make_cluster(start=False, conf_extra=ACCT_CONF % port + conf_extra, **kw)
    c.acct_port = port
    a = Acct(c, backend, port)
    try:
        a.start()
        if start:
            c.start()
        yield c, a
    finally:
        a.stop()


@pytest.fixture(params=BACKENDS)
def acct_cluster(request, make_cluster):
    with acct_beside(make_cluster, request.param, "MinJobAge=2\n", cpus=8, gpus=0) as ca:
        yield ca


def sacct_rows(c, *args):
    p = c.run("sacct", "-n", "-P", "-S", "2000-01-01", *args)
    assert p.returncode == 0, p.stderr
    return [l.split("|") for l in p.stdout.splitlines() if l]


def wait_sacct(c, pred, what, timeout=60):
    last = []

    def ok():
        last[:] = [sacct_rows(c, "-X", "-o", "JobIDRaw,State,ExitCode")]
        return pred(last[0])
    try:
        c.wait_for(ok, what, timeout=timeout, interval=0.5)
    except AssertionError:
        raise AssertionError("%s; last sacct: %s" % (what, last))
    return last[0]


def test_jobs_and_steps_reach_sacct(acct_cluster):
    c, a = acct_cluster
    ok = c.run("sbatch", "--parsable", "--wrap", "true", check=True).stdout.strip()
    bad = c.run("sbatch", "--parsable", "--wrap", "exit 3", check=True).stdout.strip()
    steps = c.run("sbatch", "--parsable", "--wrap", "srun true; srun false; exit 0",
                  check=True).stdout.strip()
    ids = {ok, bad, steps}
    rows = wait_sacct(c, lambda r: {x[0] for x in r if x[1] not in ("PENDING", "RUNNING")}
                      >= ids, "three finished jobs in sacct")
    got = {x[0]: (x[1], x[2]) for x in rows}
    assert got[ok] == ("COMPLETED", "0:0")
    assert got[bad] == ("FAILED", "3:0")
    assert got[steps] == ("COMPLETED", "0:0")

    def step_rows():
        return {r[0]: (r[1], r[2]) for r in
                sacct_rows(c, "-j", steps, "-o", "JobID,State,ExitCode")}
    c.wait_for(lambda: len(step_rows()) >= 4, "the job's steps in sacct", timeout=30)
    srows = step_rows()
    assert srows[steps + ".batch"] == ("COMPLETED", "0:0")
    assert srows[steps + ".0"] == ("COMPLETED", "0:0")
    assert srows[steps + ".1"] == ("FAILED", "1:0")
    conf = c.run("scontrol", "show", "config", check=True).stdout
    for key, value in (("AccountingStorageType", "accounting_storage/slurmdbd"),
                       ("AccountingStorageHost", "localhost"),
                       ("AccountingStoragePort", str(c.acct_port))):
        assert "%-23s = %s\n" % (key, value) in conf, key
    if a.backend == "sqlite":  # the capacity record (sreport's denominator)
        db = sqlite3.connect(str(c.state / "loom_acct.db"))
        rows = db.execute("SELECT tres FROM cluster_tres").fetchall()
        db.close()
        assert ("cpu=16,mem=8000M,node=2,billing=16",) in rows, rows
    spool = c.state / "acct"
    assert spool.is_dir()
    c.wait_for(lambda: (spool / "acked").exists(), "the acked mark")


def test_cancelled_by(make_cluster):
    """scancel's uid reaches sacct: 'CANCELLED by <uid>' on the job row (cut to
    'CANCELLED+' in the default 10-wide column), plain CANCELLED on its batch
    step; it is journaled with the job's end, so a restarted controller keeps it."""
    with acct_beside(make_cluster, conf_extra="MinJobAge=600\n", cpus=8, gpus=0) as (c, a):
        run = c.run("sbatch", "--parsable", "--wrap", "sleep 300", check=True).stdout.strip()
        pend = c.run("sbatch", "--parsable", "-H", "--wrap", "true", check=True).stdout.strip()
        done = c.run("sbatch", "--parsable", "--wrap", "true", check=True).stdout.strip()

        def state(jid):
            jobs = c.rpc("job.info").get("jobs", [])
            return next((j for j in jobs if j["job_id"] == int(jid)), {})
        c.wait_for(lambda: state(run).get("state", [""])[0] == "RUNNING", "job running",
                   timeout=60)
        c.wait_for(lambda: state(done).get("state", [""])[0] == "COMPLETED", "job done",
                   timeout=60)
        c.run("scancel", run, pend, check=True)
        uid = os.getuid()
        want = "CANCELLED by %d" % uid
        wait_sacct(c, lambda r: {x[0]: x[1] for x in r}.get(run) == want and
                   {x[0]: x[1] for x in r}.get(pend) == want, "two cancelled jobs in sacct")
        assert state(run)["cancelled_by"] == uid
        assert "cancelled_by" not in state(done)
        # Journaled: a controller killed and restarted still knows who cancelled it.
        c.kill_ctld(signal.SIGKILL)
        c.start_ctld()
        assert state(run)["cancelled_by"] == uid
        assert state(pend)["cancelled_by"] == uid
        # The batch step ends plain CANCELLED; the default layout cuts the job's state.
        c.wait_for(lambda: len(sacct_rows(c, "-j", run, "-o", "JobID")) >= 2,
                   "the batch step in sacct", timeout=60)
        rows = {r[0]: r[1] for r in sacct_rows(c, "-j", run, "-o", "JobID,State")}
        assert rows == {run: want, run + ".batch": "CANCELLED"}, rows
        # slurmdbd 22.05 keeps the job's 0:0 of the moment it was cancelled;
        # the batch step and scontrol have the script's signal
        rows = {r[0]: r[1] for r in sacct_rows(c, "-j", run, "-o", "JobID,ExitCode")}
        assert rows == {run: "0:0", run + ".batch": "0:15"}, rows
        p = c.run("sacct", "-n", "-X", "-S", "2000-01-01", "-j", run, "-o", "JobID,State",
                  check=True)
        assert p.stdout.split() == [run, "CANCELLED+"], p.stdout
        p = c.run("sacct", "-n", "-X", "-S", "2000-01-01", "-j", run, "-o", "State%20",
                  check=True)
        assert p.stdout.strip() == want, p.stdout
        cancelled = sacct_rows(c, "-X", "-s", "CA", "-o", "JobIDRaw,State")
        assert sorted(x[0] for x in cancelled) == sorted([run, pend]), cancelled
        assert sacct_rows(c, "-X", "-j", done, "-o", "State") == [["COMPLETED"]]


def submit_many(c, n):
    ids = []
    for _ in range(n):
        r = c.submit("#!/bin/sh\ntrue\n", cpus_per_task=1, ntasks=1)
        assert r.get("rc") == 0, r
        ids.append(str(r["job_id"]))
    return ids


def test_500_jobs_through_outages(acct_cluster):
    c, a = acct_cluster
    ids = submit_many(c, 150)
    # The database goes away while jobs run and more arrive.
    if a.backend == "pgsql":
        a.block(True)
        ids += submit_many(c, 50)
        time.sleep(1.5)  # loomdbd answers errors meanwhile: the controller keeps the records
    a.kill()
    ids += submit_many(c, 150)
    # The controller dies too (SIGKILL) with records spooled, and comes back.
    c.kill_ctld(signal.SIGKILL)
    c.start_ctld()
    ids += submit_many(c, 500 - len(ids))
    assert len(set(ids)) == 500

    def busy():
        return [x for x in c.rpc("job.info").get("jobs", [])
                if x["state"][0] in ("PENDING", "RUNNING") or "COMPLETING" in x["state"]]
    c.wait_for(lambda: not busy(), "the jobs to finish", timeout=120, interval=0.5)
    log = (c.logdir / "loomctld.log").read_text()
    assert "accounting: loomdbd" in log and "unavailable" in log
    if a.backend == "pgsql":
        a.block(False)
    a.start()

    def final(r):  # a run left by a requeue (the controller's restart) stays REQUEUED
        return [x for x in r if x[1] != "REQUEUED"]
    rows = wait_sacct(c, lambda r: len(final(r)) >= 500 and
                      all(x[1] == "COMPLETED" for x in final(r)),
                      "500 COMPLETED jobs in sacct", timeout=60)
    rows = final(rows)
    assert sorted(x[0] for x in rows) == sorted(ids)  # each job once, no other
    assert all(x[2] == "0:0" for x in rows)
    assert len(sacct_rows(c, "-X", "-s", "COMPLETED", "-o", "JobIDRaw")) == 500


def test_loom_up_starts_accounting(tmp_path):
    """loom up starts loomdbd (SQLite in its state directory): sacct works at once."""
    run = str(tmp_path / "run")
    env = dict(os.environ, TZ="UTC")
    loom = str(BIN / "loom")
    up = subprocess.run([loom, "up", "--dir", run, "--nodes", "1", "--gpus-per-node", "0",
                         "--cpus-per-node", "2", "--mem-per-node", "2000"],
                        capture_output=True, text=True, env=env, timeout=60)
    try:
        assert up.returncode == 0, up.stderr
        env["SLURM_CONF"] = run + "/etc/slurm.conf"
        conf = open(env["SLURM_CONF"]).read()
        assert "AccountingStorageType=accounting_storage/slurmdbd\n" in conf
        job = subprocess.run([str(BIN / "sbatch"), "--parsable", "--wrap", "exit 4"],
                             capture_output=True, text=True, env=env, cwd=run,
                             timeout=30).stdout.strip()
        deadline = time.time() + 30
        out = ""
        while time.time() < deadline and "FAILED" not in out:
            out = subprocess.run([str(BIN / "sacct"), "-n", "-X", "-P", "-j", job,
                                  "-o", "JobID,State,ExitCode"], capture_output=True,
                                 text=True, env=env, timeout=30).stdout
            time.sleep(0.3)
        assert out == "%s|FAILED|4:0\n" % job
        log = open(run + "/log/loomctld.log").read()
        assert "accounting: connected to loomdbd" in log and "unavailable" not in log
    finally:
        down = subprocess.run([loom, "down", "--dir", run], capture_output=True, text=True,
                              env=env, timeout=60)
    assert "stopped (3 daemons)" in down.stdout, down.stdout + down.stderr
    for name in os.listdir(run + "/log"):
        text = open(os.path.join(run, "log", name), errors="replace").read()
        assert "Sanitizer" not in text and "runtime error:" not in text, text


def test_requeue_same_second_keeps_each_run(acct_cluster):
    """A job requeued in the second it started is two runs in accounting, as
    sacct -D shows them under slurmdbd 22.05: the first REQUEUED (with its
    batch step), then the next one; without -D only the last run is listed."""
    c, a = acct_cluster
    while time.time() % 1 > 0.2:  # submit, start and requeue inside one second
        time.sleep(0.01)
    mark = c.work / "started"
    jid = c.run("sbatch", "--parsable", "--requeue", "-o", "/dev/null", "--wrap",
                "touch %s; exec sleep 300" % mark, check=True).stdout.strip()
    c.wait_for(mark.exists, "the job to run", timeout=60, interval=0.02)
    c.run("scontrol", "requeue", jid, check=True)

    def rerun():  # pending again or already started again (BeginTime passed)
        rec = c.job(int(jid))
        return rec.get("restart_cnt") == 1 and "COMPLETING" not in rec["state"]
    c.wait_for(rerun, "the job to be queued again", timeout=60)
    c.run("scancel", jid, check=True)
    rows = []

    def runs():
        rows[:] = sacct_rows(c, "-D", "-j", jid, "-o", "JobID,State,Submit")
        return [r[0] for r in rows] == [jid, jid + ".batch", jid] and rows[2][1] != "PENDING"
    try:
        c.wait_for(runs, "two runs in sacct -D", timeout=60, interval=0.5)
    except AssertionError:
        raise AssertionError("sacct -D: %s" % rows)
    assert [r[1] for r in rows[:2]] == ["REQUEUED", "CANCELLED"], rows
    assert rows[2][2] > rows[0][2], rows  # each run its own submit second
    last = sacct_rows(c, "-j", jid, "-o", "JobID,State")
    assert [r[0] for r in last] == [jid], last


def test_suspended_time_is_not_run_time(acct_cluster):
    """scontrol suspend/resume as slurmctld 22.05 counts them (side by side):
    while suspended, squeue's TIME and RunTime stand at the run before the
    suspend (SecsPreSuspend); the resume moves EndTime (the time limit) on by
    the pause; sacct's Elapsed leaves the pause out and Suspended shows it."""
    c, a = acct_cluster
    jid = c.run("sbatch", "--parsable", "-t", "5", "-o", "/dev/null", "--wrap", "sleep 300",
                check=True).stdout.strip()
    c.wait_job(int(jid), "RUNNING")
    time.sleep(1.2)
    c.run("scontrol", "suspend", jid, check=True)

    def show():
        out = c.run("scontrol", "show", "job", jid, check=True).stdout
        return dict(kv.split("=", 1) for kv in out.split() if "=" in kv)
    before = show()
    assert before["JobState"] == "SUSPENDED" and before["SuspendTime"] != "None", before
    pre = int(before["SecsPreSuspend"])
    assert pre >= 1 and before["RunTime"] == "00:00:%02d" % pre, before
    time.sleep(2.5)
    sq = c.run("squeue", "-h", "-j", jid, "-o", "%M %L", check=True).stdout.split()
    assert sq == ["0:%02d" % pre, "4:%02d" % (60 - pre)], sq
    c.run("scontrol", "resume", jid, check=True)
    after = show()
    paused = (int(time.mktime(time.strptime(after["SuspendTime"], "%Y-%m-%dT%H:%M:%S"))) -
              int(time.mktime(time.strptime(before["SuspendTime"], "%Y-%m-%dT%H:%M:%S"))))
    assert paused >= 2, (before, after)
    end0 = time.mktime(time.strptime(before["EndTime"], "%Y-%m-%dT%H:%M:%S"))
    end1 = time.mktime(time.strptime(after["EndTime"], "%Y-%m-%dT%H:%M:%S"))
    assert end1 - end0 == paused, (before, after)
    c.kill_ctld(signal.SIGKILL)  # journaled: a restarted controller counts the same
    c.start_ctld()
    again = show()
    assert [again[k] for k in ("EndTime", "SuspendTime", "SecsPreSuspend")] == [
        after[k] for k in ("EndTime", "SuspendTime", "SecsPreSuspend")], (after, again)
    c.run("scancel", jid, check=True)
    rows = []

    def ended():
        rows[:] = sacct_rows(c, "-X", "-j", jid, "-o", "Start,End,ElapsedRaw,Suspended")
        return rows and rows[0][1] != "Unknown"
    c.wait_for(ended, "the job's end in sacct", timeout=60, interval=0.5)
    start, end, elapsed, susp = rows[0]
    secs = (time.mktime(time.strptime(end, "%Y-%m-%dT%H:%M:%S")) -
            time.mktime(time.strptime(start, "%Y-%m-%dT%H:%M:%S")))
    assert susp == "00:00:%02d" % paused and int(elapsed) == secs - paused, rows
    assert c.run("scontrol", "resume", jid).returncode != 0  # not suspended any more


def test_salloc_sigterm_exit_code(acct_cluster):
    """salloc killed by SIGTERM, as 22.05 side by side: the allocation is
    revoked, the job ends CANCELLED with ExitCode 0:0 (scontrol and sacct),
    and accounting has no batch step for it (nor for srun's own allocation)."""
    c, a = acct_cluster
    p = subprocess.Popen([str(BIN / "salloc"), "-n1", "sleep", "100"], env=c.env,
                         cwd=str(c.work), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    try:
        c.wait_for(lambda: any(c.state_of(j) == "RUNNING" for j in c.jobs().values()),
                   "salloc's job to run", timeout=60)
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    jid = str(next(iter(c.jobs())))
    assert p.returncode == 0 and "Job allocation %s has been revoked." % jid in out, out
    text = c.run("scontrol", "show", "job", jid, check=True).stdout
    assert "JobState=CANCELLED " in text and " ExitCode=0:0\n" in text, text
    srun = c.run("srun", "-n1", "true", check=True)
    sid = str(max(c.jobs()))
    rows = []

    def ended():
        rows[:] = sacct_rows(c, "-j", "%s,%s" % (jid, sid), "-o", "JobID,State,ExitCode")
        return {r[0] for r in rows} >= {jid, sid, sid + ".0"} and all(
            r[1] not in ("RUNNING", "PENDING") for r in rows)
    c.wait_for(ended, "both jobs in sacct", timeout=60, interval=0.5)
    assert sorted(rows) == sorted([[jid, "CANCELLED by %d" % os.getuid(), "0:0"],
                                   [sid, "COMPLETED", "0:0"], [sid + ".0", "COMPLETED", "0:0"]]), (
        rows, srun.stderr)
