"""Crash torture: every acknowledged job survives SIGKILL of any daemon.

A cluster of loomctld, two loomd and loomdbd (SQLite) takes a seeded random
mix of short batch jobs (plain, --array=0-9, --dependency=afterok on an
earlier job, --wrap "srun true") through sbatch while a killer thread
SIGKILLs one daemon at a time at random moments (loomctld, a loomd, loomdbd;
a step supervisor loomstepd once) and restarts it after a short random delay.
Between rounds each daemon's sockets get malformed frames and must stay up.

At the end, with every daemon up:
  - every job id sbatch printed (exit 0) exists, with the name it was given
    (so no id was handed out twice), and each array has its ten tasks once;
  - every job and task is final: COMPLETED, except what Slurm 22.05 does too:
    a job whose batch loomstepd was killed is requeued and runs again, or
    ends NODE_FAIL (as slurmctld does with a batch job its node no longer
    runs); one whose srun step's loomstepd was killed ends FAILED (srun
    lost its step) or COMPLETED (the step had ended); an srun job whose step launch found a killed
    loomd down ends FAILED (srun talks to the nodes itself and gives up, as
    Slurm's does); a job that waits on one that did not complete is
    CANCELLED (DependencyParameters=kill_invalid_depend);
  - each job's script ran to its end once (a requeued one at most once per
    run), never for a job cancelled before it started;
  - squeue -t all and sacct list the same jobs in the same states, sacct
    each job once (JobID and JobIDRaw unique), nothing missing;
  - no daemon died by itself; no log holds a sanitizer report or a failed
    assertion.

LOOM_TORTURE_SEED (default fixed for CI), LOOM_TORTURE_ROUNDS (default 3) and
LOOM_TORTURE_JOBS (sbatch calls per round, default 100) make longer runs by
hand; a failure prints the seed. The dev run takes about 40 s.
"""
import os
import random
import re
import signal
import socket
import struct
import threading
import time

import pytest

from conftest import _cmdline, _pids, recv_frame
from test_acct_link import acct_beside

SEED = int(os.environ.get("LOOM_TORTURE_SEED", "20261121"))
ROUNDS = int(os.environ.get("LOOM_TORTURE_ROUNDS", "3"))
JOBS = int(os.environ.get("LOOM_TORTURE_JOBS", "100"))
FINAL_TIMEOUT = 240.0
ASSERT_MARKS = ("Assertion", "assertion failed", "Aborted", "AddressSanitizer",
                "runtime error:", "LeakSanitizer")


class Chaos:
    """The daemons under test and the killer thread."""

    def __init__(self, c, acct, rng):
        self.c, self.acct, self.rng = c, acct, rng
        self.lock = threading.Lock()
        self.stop_ev = threading.Event()
        self.errors = []
        self.kills = []  # (victim, time)
        self.stepd_victim = None  # job id whose supervisor was killed
        self.stepd_step = False  # ... the supervisor of an srun step (else the batch one)
        self.stepd_done = False
        self.thread = None

    # -- one daemon at a time --
    def victims(self):
        return ["loomctld", "loomdbd"] + self.c.node_names

    def alive(self, name):
        if name == "loomctld":
            return self.c.ctld is not None and self.c.ctld.alive()
        if name == "loomdbd":
            return self.acct.proc is not None and self.acct.proc.alive()
        d = self.c.loomds.get(name)
        return d is not None and d.alive()

    def check_alive(self):
        """A daemon that died without our SIGKILL is a crash."""
        for name in self.victims():
            if not self.alive(name):
                self.errors.append("%s died by itself (seed %d)" % (name, SEED))

    def kill(self, name):
        if name == "loomctld":
            self.c.kill_ctld(signal.SIGKILL)
        elif name == "loomdbd":
            self.acct.kill()
        else:
            self.c.stop_node(name, signal.SIGKILL)
        self.kills.append((name, time.time()))

    def restart(self, name):
        if name == "loomctld":
            self.c.start_ctld(wait=False)
            self.wait(lambda: self.c.ping(), "loomctld to answer after a restart")
        elif name == "loomdbd":
            self.acct.start()
        else:
            self.c.start_node(name)

    def wait(self, pred, what, timeout=60.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if pred():
                return
            time.sleep(0.1)
        raise AssertionError("timed out waiting for %s (seed %d)" % (what, SEED))

    def kill_a_stepd(self):
        """SIGKILL one loomstepd of this cluster, a step's (srun's) or a batch
        script's, whichever the dice prefer; returns its job id or None."""
        found = []
        steps_first = self.rng.random() < 0.5
        for pid in _pids():
            cmd = _cmdline(pid)
            if cmd and cmd[0].endswith("loomstepd") and str(self.c.root) in cmd[-1]:
                step = os.path.basename(cmd[-1]).startswith("step")
                found.append((step != steps_first, pid, cmd))
        for _, pid, cmd in sorted(found):
            self.stepd_step = os.path.basename(cmd[-1]).startswith("step")
            m = re.search(r"(\d+)", os.path.basename(cmd[-1]))
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                continue
            self.kills.append(("loomstepd", time.time()))
            return int(m.group(1)) if m else None
        return None

    # -- the killer thread --
    def run(self):
        try:
            while not self.stop_ev.wait(self.rng.uniform(0.3, 2.0)):
                self.check_alive()
                if not self.stepd_done and self.rng.random() < 0.25:
                    job = self.kill_a_stepd()
                    if job is not None:
                        self.stepd_victim, self.stepd_done = job, True
                    continue
                name = self.rng.choice(self.victims())
                with self.lock:
                    self.kill(name)
                    time.sleep(self.rng.uniform(0.1, 1.5))
                    self.restart(name)
        except Exception as e:  # noqa: BLE001 (reported by the test)
            self.errors.append("killer thread: %r (seed %d)" % (e, SEED))

    def start(self):
        self.stop_ev.clear()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def stop(self):
        self.stop_ev.set()
        if self.thread:
            self.thread.join(timeout=120)
        self.check_alive()


# ---- submissions ----------------------------------------------------------------

class Jobs:
    """What sbatch acknowledged: id -> (kind, name, parent)."""

    def __init__(self, c, rng):
        self.c, self.rng = c, rng
        self.acked = {}
        self.seq = 0
        self.refused = 0

    def sbatch(self, kind, parent=None):
        self.seq += 1
        name = "t%d" % self.seq
        args = ["--parsable", "-J", name]  # output: slurm-%j.out (arrays %A_%a) in work/
        # Each run that gets to its end leaves a line in runs/<name>[_<task>].
        mark = "echo $SLURM_JOB_ID >> runs/%s%s" % (name, "_$SLURM_ARRAY_TASK_ID"
                                                    if kind == "array" else "")
        work = "srun true" if kind == "srun" else "sleep 0.%d" % self.rng.randint(0, 9)
        if kind == "array":
            args += ["--array=0-9"]
        elif kind == "dep":
            args += ["--dependency=afterok:%d" % parent]
        args += ["--wrap", "%s && %s" % (work, mark)]
        try:
            p = self.c.run("sbatch", *args, timeout=60)
        except Exception:  # noqa: BLE001 (a hung sbatch acknowledged nothing)
            self.refused += 1
            return
        m = re.match(r"^(\d+)(;\S+)?\n?$", p.stdout)
        if p.returncode != 0 or not m:
            self.refused += 1
            return
        job = int(m.group(1))
        assert job not in self.acked, "sbatch printed job id %d twice (seed %d)" % (job, SEED)
        self.acked[job] = (kind, name, parent)

    def submit_round(self, n):
        for _ in range(n):
            r = self.rng.random()
            if r < 0.12:
                self.sbatch("array")
            elif r < 0.30 and self.acked:
                self.sbatch("dep", self.rng.choice(sorted(self.acked)[-20:]))
            elif r < 0.45:
                self.sbatch("srun")
            else:
                self.sbatch("plain")
            time.sleep(self.rng.uniform(0, 0.1))


# ---- malformed input between rounds -----------------------------------------------

MALFORMED = [
    ("truncated frame", struct.pack(">I", 100) + b'{"v":1,"type"'),
    ("bad length", struct.pack(">I", 3) + b'{"v":1,"type":"ping","id":1}'),
    ("huge length", struct.pack(">I", 0xFFFFFFFF) + b"{"),
    ("bad json", struct.pack(">I", 9) + b'{"v":1,,}'),
    ("unknown type", None),
    ("empty frame", struct.pack(">I", 0)),
]


def _frame(obj):
    import json
    data = json.dumps(obj, separators=(",", ":")).encode()
    return struct.pack(">I", len(data)) + data


def _connect(addr):
    if isinstance(addr, tuple):
        return socket.create_connection(addr, timeout=10)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(str(addr))
    return s


def _connect_retry(addr, what, timeout=60.0):
    """A daemon just restarted may not listen yet: wait for it, generously."""
    deadline = time.time() + timeout
    while True:
        try:
            return _connect(addr)
        except OSError as e:
            if time.time() > deadline:
                raise AssertionError("cannot connect to %s before '%s' (seed %d): %s"
                                     % (addr, what, SEED, e))
            time.sleep(0.2)


def send_garbage(addr):
    """Each malformed input on a fresh connection; the reply (or EOF) is not checked,
    only that the daemon stays up, which the caller verifies."""
    for name, data in MALFORMED:
        if data is None:
            data = _frame({"v": 1, "type": "no.such.type", "id": 5})
        s = _connect_retry(addr, name)
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            try:
                recv_frame(s)
            except (OSError, ValueError):
                pass
        except OSError:
            pass
        finally:
            s.close()


def garbage_round(c, acct, chaos):
    addrs = [c.sock, ("127.0.0.1", c.ctld_port), c.state / "loomdbd.sock",
             ("127.0.0.1", acct.port)]
    for name in c.node_names:
        addrs.append(("127.0.0.1", c.node_ports[name]))
        sock = c.root / "spool" / name / "loomd.sock"
        if sock.exists():
            addrs.append(sock)
    for addr in addrs:
        send_garbage(addr)
    time.sleep(0.5)
    for name in chaos.victims():
        assert chaos.alive(name), "%s died of malformed input (seed %d)\n%s" % (
            name, SEED, c.logs())
    assert c.ping(), "loomctld stopped answering after malformed input"


# ---- the end state ------------------------------------------------------------------

ACTIVE = ("PENDING", "RUNNING", "SUSPENDED", "CONFIGURING")


def records(c):
    return c.rpc("job.info", timeout=60).get("jobs", [])


def busy(recs):
    return [r for r in recs if r["state"][0] in ACTIVE or "COMPLETING" in r["state"]]


def wait_quiet(c, chaos):
    deadline = time.time() + FINAL_TIMEOUT
    last = []
    while time.time() < deadline:
        try:
            last = busy(records(c))
            if not last:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError("jobs still not final after %.0fs (seed %d): %s\n%s" % (
        FINAL_TIMEOUT, SEED, [(r["job_id"], r["state"], r.get("reason")) for r in last[:20]],
        c.logs()))


def jid(r):
    """squeue's/sacct's JobID of a record: 12 or 12_3."""
    if r.get("array_task_id") is not None and r.get("array_job_id"):
        return "%d_%d" % (r["array_job_id"], r["array_task_id"])
    return str(r["job_id"])


def job_output(c, r):
    name = "slurm-%s.out" % jid(r)
    try:
        return (c.work / name).read_text(errors="replace")[-600:]
    except OSError:
        return None


def launch_failed_on_killed_node(c, r, chaos):
    m = re.search(r"Task launch for StepId=\d+\.\d+ failed on node (\S+):", job_output(c, r) or "")
    return m is not None and m.group(1) in {k[0] for k in chaos.kills}


def job_runs(c, name, task):
    path = c.work / "runs" / ("%s_%d" % (name, task["array_task_id"]) if task else name)
    try:
        return len(path.read_text().split())
    except OSError:
        return 0


def check_jobs(c, jobs, chaos):
    recs = records(c)
    ids = [r["job_id"] for r in recs]
    assert len(ids) == len(set(ids)), "a job id is held by two records (seed %d)" % SEED
    byid = {r["job_id"]: r for r in recs}
    tasks = {}
    for r in recs:
        if r.get("array_job_id") and r.get("array_task_id") is not None:
            tasks.setdefault(r["array_job_id"], []).append(r)
    bad = []

    def final_of(job):
        kind = jobs.acked[job][0]
        if kind == "array":
            return [c.state_of(t) for t in tasks.get(job, [])]
        return [c.state_of(byid[job])]

    def parent_ok(parent):
        return parent in jobs.acked and all(s == "COMPLETED" for s in final_of(parent))

    for job in sorted(jobs.acked):
        kind, name, parent = jobs.acked[job]
        rec = byid.get(job)
        if rec is None:
            bad.append("acknowledged job %d (%s) is gone" % (job, name))
            continue
        if rec.get("name") != name:
            bad.append("job %d is %r, sbatch named it %r: id reused" % (job, rec.get("name"),
                                                                     name))
        if kind == "array":
            got = sorted(t["array_task_id"] for t in tasks.get(job, []))
            if got != list(range(10)):
                bad.append("array %d has tasks %s" % (job, got))
            group = tasks.get(job, [])
        else:
            group = [rec]
        for r in group:
            st = c.state_of(r)
            if kind == "dep" and not parent_ok(parent):
                want = {"CANCELLED"}
            elif (job == chaos.stepd_victim or r["job_id"] == chaos.stepd_victim) and \
                    chaos.stepd_step:
                want = {"COMPLETED", "FAILED"}  # srun lost its step: it fails, its job too
            elif job == chaos.stepd_victim or r["job_id"] == chaos.stepd_victim:
                want = {"COMPLETED", "NODE_FAIL"}  # requeued (and ran again) or NODE_FAIL
            elif kind == "srun" and launch_failed_on_killed_node(c, r, chaos):
                want = {"COMPLETED", "FAILED"}  # srun cannot reach a loomd: Slurm's srun fails
            else:
                want = {"COMPLETED"}
            runs = job_runs(c, name, r if kind == "array" else None)
            most = 1 + (r.get("restart_cnt") or 0)
            if st == "COMPLETED" and not 1 <= runs <= most:
                bad.append("job %s ran to its end %d times (restarts %d)" % (jid(r), runs,
                                                                            most - 1))
            elif st != "COMPLETED" and runs > (0 if st == "CANCELLED" else most):
                bad.append("job %s ended %s but ran to its end %d times (restarts %d)" % (
                    jid(r), st, runs, most - 1))
            if st not in want:
                bad.append("job %s (%s) ended %s %s, want %s; output: %r" % (
                    jid(r), kind, r["state"], r.get("reason"), want, job_output(c, r)))
    assert not bad, "seed %d:\n  %s\n%s" % (SEED, "\n  ".join(bad[:30]), c.logs(8000))
    return recs


def squeue_states(c):
    p = c.run("squeue", "-h", "-t", "all", "-o", "%i|%T", timeout=60)
    assert p.returncode == 0, p.stderr
    out = {}
    for line in p.stdout.splitlines():
        i, st = line.split("|")
        assert i not in out, "squeue lists %s twice" % i
        out[i] = st
    return out


def sacct_rows(c):
    p = c.run("sacct", "-n", "-P", "-X", "-S", "2000-01-01", "-o", "JobID,JobIDRaw,State",
              timeout=60)
    assert p.returncode == 0, p.stderr
    return [l.split("|") for l in p.stdout.splitlines() if l]


def check_sacct(c, recs):
    want = {jid(r): c.state_of(r) for r in recs}
    last = {}

    def same():
        rows = sacct_rows(c)
        last["rows"] = rows
        got = {r[0]: r[2].split()[0] for r in rows}
        return len(rows) == len(got) and got == want

    deadline = time.time() + 90
    while time.time() < deadline and not same():
        time.sleep(1)
    rows = last["rows"]
    got = {}
    for r in rows:
        got.setdefault(r[0], []).append(r[2])
    dups = {k: v for k, v in got.items() if len(v) > 1}
    assert not dups, "sacct lists jobs more than once (seed %d): %s" % (SEED, dups)
    raws = [r[1] for r in rows]
    assert len(raws) == len(set(raws)), "sacct repeats a JobIDRaw (seed %d)" % SEED
    missing = sorted(set(want) - set(got))
    extra = sorted(set(got) - set(want))
    differ = sorted((k, want[k], got[k][0]) for k in set(want) & set(got)
                    if got[k][0].split()[0] != want[k])
    assert not (missing or extra or differ), (
        "sacct and the controller disagree (seed %d): missing %s, extra %s, states %s\n%s"
        % (SEED, missing[:20], extra[:20], differ[:20], c.logs(8000)))
    sq = squeue_states(c)
    assert sq == want, "squeue and the controller disagree (seed %d): %s" % (
        SEED, sorted(set(sq.items()) ^ set(want.items()))[:20])


def check_logs(c):
    for p in c.log_files():
        text = p.read_text(errors="replace")
        for mark in ASSERT_MARKS:
            assert mark not in text, "%s in %s (seed %d):\n%s" % (mark, p.name, SEED,
                                                                  text[-6000:])


# ---- the test -------------------------------------------------------------------------

@pytest.fixture
def torture(make_cluster):
    with acct_beside(make_cluster, conf_extra="DependencyParameters=kill_invalid_depend\n",
                     nodes=2, cpus=4, gpus=0) as (c, a):
        (c.work / "runs").mkdir()
        yield c, a


def test_crash_torture(torture):
    c, a = torture
    rng = random.Random(SEED)
    print("LOOM_TORTURE_SEED=%d ROUNDS=%d JOBS=%d" % (SEED, ROUNDS, JOBS))
    chaos = Chaos(c, a, random.Random(rng.random()))
    jobs = Jobs(c, random.Random(rng.random()))
    for rnd in range(ROUNDS):
        chaos.start()
        jobs.submit_round(JOBS)
        time.sleep(rng.uniform(1, 3))  # kills while the last jobs run
        chaos.stop()
        assert not chaos.errors, "\n".join(chaos.errors) + "\n" + c.logs()
        garbage_round(c, a, chaos)
    assert len(jobs.acked) > JOBS * ROUNDS // 3, "sbatch acknowledged only %d of %d (seed %d)" % (
        len(jobs.acked), jobs.seq, SEED)
    wait_quiet(c, chaos)
    recs = check_jobs(c, jobs, chaos)
    check_sacct(c, recs)
    for name in chaos.victims():
        assert chaos.alive(name), "%s is down at the end (seed %d)" % (name, SEED)
    check_logs(c)
    victim = next((r for r in recs if r["job_id"] == chaos.stepd_victim), {})
    print("acked %d, refused %d, kills %d, stepd victim %s%s: %s, restarts %s" % (
        len(jobs.acked), jobs.refused, len(chaos.kills), chaos.stepd_victim,
        " (step)" if chaos.stepd_step else "", victim.get("state"), victim.get("restart_cnt")))
