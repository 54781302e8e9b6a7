"""loomstepd on its own: a job dir, a fake loomd on loomd.sock, no controller.

These tests drive the supervisor the way loomd does (spec.json, then the
stepd.sock and loomd.sock messages of docs/proto/messages.md §5) and check
what a job sees: its output files, its environment, the CANCELLED line, the
signals, and the completion report that must be retried until acknowledged.
"""
import json
import os
import pathlib
import pwd
import shutil
import grp
import signal
import socket
import struct
import subprocess
import tempfile
import threading
from pathlib import Path
import time

import pytest

BUILD = pathlib.Path(os.environ.get("LOOM_BUILD_DIR", "build/dev"))
STEPD = BUILD / "bin" / "loomstepd"

pytestmark = pytest.mark.skipif(not STEPD.exists(), reason=f"{STEPD} not built")


def frame(obj):
    body = json.dumps(obj).encode()
    return struct.pack(">I", len(body)) + body


def read_frame(sock):
    head = b""
    while len(head) < 4:
        chunk = sock.recv(4 - len(head))
        if not chunk:
            return None
        head += chunk
    (n,) = struct.unpack(">I", head)
    body = b""
    while len(body) < n:
        chunk = sock.recv(n - len(body))
        if not chunk:
            return None
        body += chunk
    return json.loads(body.split(b"\0")[0])


class FakeLoomd:
    """Listens on loomd.sock; records stepd.done; acks when told to."""

    def __init__(self, path, ack=True):
        self.path = str(path)
        self.ack = ack
        self.done = []
        self.conns = []
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(self.path)
        self.srv.listen(16)
        self.stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        self.srv.settimeout(0.2)
        while not self.stop:
            try:
                c, _ = self.srv.accept()
            except (socket.timeout, OSError):
                continue
            self.conns.append(c)
            threading.Thread(target=self._conn, args=(c,), daemon=True).start()

    def _conn(self, c):
        while True:
            try:
                msg = read_frame(c)
            except OSError:
                return
            if msg is None:
                return
            if msg.get("type") == "stepd.done":
                self.done.append(msg)
                if self.ack:
                    c.sendall(frame({"v": 1, "type": "reply", "id": msg["id"], "rc": 0, "msg": ""}))

    def close(self):
        self.stop = True
        for c in self.conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
                c.close()
            except OSError:
                pass
        self.srv.close()
        self.thread.join(timeout=2)
        try:
            os.unlink(self.path)
        except OSError:
            pass


def stepd_request(jobdir, body, timeout=5):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(str(jobdir / "stepd.sock"))
    msg = {"v": 1, "id": 1, **body}
    s.sendall(frame(msg))
    reply = read_frame(s)
    s.close()
    return reply


def wait_for(pred, timeout=10.0, step=0.05):
    end = time.time() + timeout
    while time.time() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


def gone(pid):
    """pid has ended: no such process, or a zombie (init may reap it any moment)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


def describe(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read()
    except OSError as e:
        return str(e)


class Job:
    def __init__(self, tmp, script, job_id=42, ack=True, **extra):
        self.tmp = tmp
        self.spool = tmp / "spool"
        self.spool.mkdir(exist_ok=True)
        self.dir = self.spool / f"job{job_id}"
        self.dir.mkdir(mode=0o711)  # as loomd makes it when root
        self.spool.chmod(0o755)
        self.work = tmp / "work"
        self.work.mkdir(exist_ok=True)
        uid, gid = os.getuid(), os.getgid()
        now = int(time.time())
        job = {
            "job_id": job_id,
            "name": "unit",
            "user_id": uid,
            "group_id": gid,
            "user_name": pwd.getpwuid(uid).pw_name,
            "group_name": grp.getgrgid(gid).gr_name,
            "partition": "debug",
            "work_dir": str(self.work),
            "script": script,
            "env": [f"{k}={v}" for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")]
            + ["SUBMIT_ONLY=yes", "SLURM_CONF=/ignored"],
            "nodes": "n1",
            "num_cpus": 2,
            "start_time": now,
            "end_time": now + 3600,
            "alloc": [{"node": "n1", "cpus": [0, 1], "mem": 100,
                       "gres": [{"name": "gpu", "type": "t", "index": [1, 3]}]}],
            "desc": {},
        }
        job.update(extra)
        node = {"name": "n1", "cluster": "testc", "conf": "/etc/x/slurm.conf",
                "hostname": "n1", "loomd_sock": str(self.spool / "loomd.sock"),
                "gpu_env": 0}
        (self.dir / "spec.json").write_text(json.dumps({"job": job, "node": node}))
        self.loomd = FakeLoomd(self.spool / "loomd.sock", ack=ack)
        self.log = tmp / f"stepd{job_id}.log"
        self.proc = subprocess.Popen(
            [str(STEPD), "-v", "-L", str(self.log), "--allow-root-jobs", str(self.dir)],
            stdin=subprocess.DEVNULL)

    def wait(self, timeout=20):
        self.proc.wait(timeout=timeout)
        return self.loomd.done[-1] if self.loomd.done else None

    def out(self, name=None):
        return (self.work / (name or "slurm-42.out")).read_text()

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.loomd.close()
        log = self.log.read_text() if self.log.exists() else ""
        for bad in ("ERROR: AddressSanitizer", "runtime error:", "LeakSanitizer"):
            assert bad not in log, log


@pytest.fixture
def job_factory(tmp_path):
    jobs = []

    def make(*a, **kw):
        j = Job(tmp_path, *a, **kw)
        jobs.append(j)
        return j

    yield make
    for j in jobs:
        j.close()


def test_runs_script_and_reports(job_factory):
    j = job_factory("#!/bin/bash\necho hello from $SLURM_JOB_ID\nexit 3\n")
    done = j.wait()
    assert done["job_id"] == 42
    assert done["exit_code"] == 3 << 8
    assert done["reason"] == ""
    assert j.out() == "hello from 42\n"
    assert not j.dir.exists(), "the job dir is removed once loomd acked"


def test_environment(job_factory):
    j = job_factory("#!/bin/bash\nenv\n", desc={"export": "NONE", "ntasks": 2, "cpus_per_task": 1})
    j.wait()
    env = dict(line.split("=", 1) for line in j.out().splitlines() if "=" in line)
    want = {
        "SLURM_JOB_ID": "42", "SLURM_JOBID": "42", "SLURM_JOB_NAME": "unit",
        "SLURM_JOB_NODELIST": "n1", "SLURM_NODELIST": "n1", "SLURM_JOB_NUM_NODES": "1",
        "SLURM_NNODES": "1", "SLURM_JOB_PARTITION": "debug", "SLURM_JOB_CPUS_PER_NODE": "2",
        "SLURM_CPUS_ON_NODE": "2", "SLURM_NTASKS": "2", "SLURM_NPROCS": "2",
        "SLURM_TASKS_PER_NODE": "2", "SLURM_CPUS_PER_TASK": "1", "SLURM_CLUSTER_NAME": "testc",
        "SLURM_JOB_GPUS": "1,3", "SLURM_GPUS_ON_NODE": "2", "CUDA_VISIBLE_DEVICES": "1,3",
        "ROCR_VISIBLE_DEVICES": "1,3", "GPU_DEVICE_ORDINAL": "1,3", "ZE_AFFINITY_MASK": "1,3", "SLURM_NODEID": "0",
        "SLURM_PROCID": "0", "SLURM_LOCALID": "0", "SLURM_GTIDS": "0", "SLURMD_NODENAME": "n1",
        "SLURM_TOPOLOGY_ADDR": "n1", "SLURM_TOPOLOGY_ADDR_PATTERN": "node",
        "SLURM_CONF": "/etc/x/slurm.conf", "ENVIRONMENT": "BATCH", "HOSTNAME": "n1",
        "SLURM_EXPORT_ENV": "NONE", "SLURM_JOB_UID": str(os.getuid()),
        "SLURM_SUBMIT_DIR": str(j.work),
    }
    for k, v in want.items():
        assert env.get(k) == v, (k, env.get(k), v)
    assert "SUBMIT_ONLY" not in env, "--export=NONE keeps only SLURM_*"
    assert int(env["SLURM_TASK_PID"]) > 0
    assert "SLURM_MEM_PER_NODE" not in env and "SLURM_ARRAY_JOB_ID" not in env


def test_export_all_and_cwd(job_factory):
    j = job_factory("#!/bin/bash\necho $SUBMIT_ONLY $(pwd)\n")
    j.wait()
    assert j.out() == f"yes {j.work}\n"


def test_output_patterns(job_factory):
    j = job_factory("#!/bin/bash\necho out; echo err >&2\n", std_out="o-%x-%j.txt",
                    std_err=str("%x.%4j.err"))
    j.wait()
    assert j.out("o-unit-42.txt") == "out\n"
    assert j.out("unit.0042.err") == "err\n"


def test_chdir_failure_goes_to_tmp(job_factory, tmp_path):
    j = job_factory("#!/bin/bash\npwd\n", work_dir=str(tmp_path / "nope"),
                    std_out=str(tmp_path / "work" / "o.txt"))
    j.wait()
    text = j.out("o.txt")
    assert "slurmstepd-n1: error: couldn't chdir to `%s': No such file or directory: going to /tmp instead" % (
        tmp_path / "nope") in text
    assert text.endswith("/tmp\n")


def test_cancel_writes_line_and_kills(job_factory):
    j = job_factory("#!/bin/bash\ntrap 'echo got TERM; exit 7' TERM\necho started\n"
                    "sleep 100 & wait\n")
    assert wait_for(lambda: (j.work / "slurm-42.out").exists() and "started" in j.out())
    r = stepd_request(j.dir, {"type": "stepd.signal", "signal": 9, "reason": "timeout",
                              "kill_wait": 5})
    assert r["rc"] == 0
    done = j.wait()
    assert done["reason"] == "timeout"
    assert done["exit_code"] == 7 << 8
    lines = j.out().splitlines()
    assert lines[0] == "started"
    assert lines[1].startswith("slurmstepd-n1: error: *** JOB 42 ON n1 CANCELLED AT ")
    assert lines[1].endswith(" DUE TO TIME LIMIT ***")
    assert lines[2] == "got TERM"


def test_cancel_sigkill_after_kill_wait(job_factory):
    j = job_factory("#!/bin/bash\ntrap '' TERM\necho started\nwhile true; do sleep 0.1; done\n")
    assert wait_for(lambda: (j.work / "slurm-42.out").exists() and "started" in j.out())
    t0 = time.time()
    r = stepd_request(j.dir, {"type": "stepd.signal", "signal": 9, "reason": "cancel",
                              "kill_wait": 1})
    assert r["rc"] == 0
    done = j.wait()
    assert time.time() - t0 >= 0.9
    assert done["exit_code"] & 0x7F == signal.SIGKILL
    assert done["reason"] == "cancel"
    line = j.out().splitlines()[1]
    assert line.startswith("slurmstepd-n1: error: *** JOB 42 ON n1 CANCELLED AT ") and line.endswith(
        " ***") and "DUE TO" not in line


def test_signal_batch_only_and_steps(job_factory):
    # The shell traps USR1; a "step" (own process group, like srun's tasks) too.
    script = ("#!/bin/bash\ntrap 'echo shell USR1' USR1\n"
              "python3 -c \"import os,signal,time,sys\nos.setpgid(0,0)\n"
              "signal.signal(signal.SIGUSR1, lambda *a: (print('step USR1', flush=True), sys.exit(0)))\n"
              "print('step up', flush=True)\ntime.sleep(30)\" &\n"
              "echo started\nwait; wait\necho end\n")
    j = job_factory(script)
    assert wait_for(lambda: (j.work / "slurm-42.out").exists() and "step up" in j.out())
    r = stepd_request(j.dir, {"type": "stepd.signal", "signal": 10, "reason": "signal",
                              "batch_only": True})
    assert r["rc"] == 0
    assert wait_for(lambda: "shell USR1" in j.out())
    assert "step USR1" not in j.out()
    r = stepd_request(j.dir, {"type": "stepd.signal", "signal": 10, "reason": "signal"})
    assert r["rc"] == 0
    done = j.wait()
    assert done["exit_code"] == 0
    out = j.out()
    assert out.count("shell USR1") == 1, out
    assert "step USR1" in out and out.endswith("end\n")


def test_report_retried_until_acked(job_factory):
    j = job_factory("#!/bin/bash\necho quick\n", ack=False)
    assert wait_for(lambda: j.loomd.done, timeout=10)
    status = json.loads((j.dir / "status.json").read_text())
    assert status["exit_code"] == 0 and status["job_id"] == 42
    # loomd goes away (restart): the supervisor keeps trying, then a new one acks.
    j.loomd.close()
    time.sleep(0.5)
    assert j.proc.poll() is None
    j.loomd = FakeLoomd(j.spool / "loomd.sock", ack=True)
    done = j.wait(timeout=20)
    assert done["exit_code"] == 0
    assert not j.dir.exists()


def test_signal_option_before_end(job_factory):
    now = int(time.time())
    j = job_factory("#!/bin/bash\ntrap 'echo warned; exit 0' USR2\necho up\n"
                    "for i in $(seq 100); do sleep 0.1; done\n",
                    end_time=now + 62, signal={"signo": 12, "secs": 60, "batch_only": True})
    done = j.wait(timeout=15)
    assert done["exit_code"] == 0
    assert "warned" in j.out()


def test_root_refused_without_flag(tmp_path):
    if os.getuid() != 0:
        pytest.skip("needs root")
    j = Job(tmp_path, "#!/bin/bash\necho should not run\n")
    j.proc.kill()  # the Job's own supervisor (allowed root) may have run already:
    j.proc.wait()  # forget what it did
    for f in j.dir.iterdir():
        if f.name != "spec.json":
            f.unlink()
    (j.work / "slurm-42.out").unlink(missing_ok=True)
    j.loomd.done.clear()
    proc = subprocess.Popen([str(STEPD), "-L", str(j.log), str(j.dir)])
    try:
        proc.wait(timeout=20)
        # the report may reach the test's loomd socket thread just after the exit
        assert wait_for(lambda: j.loomd.done) and j.loomd.done[-1]["reason"] == "launch_failed"
        assert not (j.work / "slurm-42.out").exists()
        assert "refusing to run a job as root" in j.log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
        j.close()


def test_leftovers_killed_when_script_ends(job_factory):
    # A background process in the job's session, and one that left it.
    j = job_factory("#!/bin/bash\nsleep 300 &\necho $! > bg.pid\n"
                    "setsid sleep 301 &\necho $! > escaped.pid\nexit 0\n")
    done = j.wait()
    assert done["exit_code"] == 0
    for name in ("bg.pid", "escaped.pid"):
        pid = int((j.work / name).read_text())
        assert wait_for(lambda: gone(pid)), "%s: %s\n%s" % (name, describe(pid), j.log.read_text())


def test_jobopt_keys(job_factory):
    """A record whose only patterns and --signal are the submitted description's."""
    # The warning falls 60 s before the end: 4 s after now, so that bash has set
    # its trap first even on a loaded machine (at now + 1 it raced the launch).
    now = int(time.time())
    j = job_factory("#!/bin/bash\ntrap 'echo warned; exit 0' USR1\necho up\n"
                    "for i in $(seq 150); do sleep 0.1; done\n", end_time=now + 64,
                    desc={"standard_output": "jo-%j.out", "kill_warning_signal": 10,
                          "kill_warning_delay": 60, "kill_warning_flags": ["BATCH_JOB"]})
    done = j.wait(timeout=25)
    assert done["exit_code"] == 0
    assert j.out("jo-42.out") == "up\nwarned\n"


def test_job_dir_removed_ends_the_job(job_factory):
    """A supervisor whose job dir is deleted (cluster torn down) ends its job and exits."""
    j = job_factory("#!/bin/bash\necho $$ > shell.pid\nsleep 300\n")
    assert wait_for(lambda: (j.work / "shell.pid").exists() and (j.work / "shell.pid").read_text())
    pid = int((j.work / "shell.pid").read_text())
    shutil.rmtree(j.dir)
    j.proc.wait(timeout=15)
    assert not j.loomd.done
    assert wait_for(lambda: gone(pid)), describe(pid)


def test_runs_as_the_job_user():
    """As root: the script and its output files belong to the job's user."""
    if os.getuid() != 0:
        pytest.skip("needs root")
    nobody = pwd.getpwnam("nobody")
    root = Path(tempfile.mkdtemp(prefix="loom-user-", dir="/tmp"))  # pytest's tmp is 0700
    root.chmod(0o755)
    work = root / "work"
    j = None
    try:
        work.mkdir()
        os.chown(work, nobody.pw_uid, nobody.pw_gid)
        j = Job(root, "#!/bin/bash\nid -u; id -g; pwd\n", user_id=nobody.pw_uid,
                group_id=nobody.pw_gid, user_name="nobody", work_dir=str(work))
        done = j.wait()
        assert done["exit_code"] == 0, j.log.read_text()
        out = work / "slurm-42.out"
        assert out.read_text() == f"{nobody.pw_uid}\n{nobody.pw_gid}\n{work}\n"
        assert out.stat().st_uid == nobody.pw_uid
        assert not j.dir.exists()
    finally:
        if j:
            j.close()
        shutil.rmtree(root, ignore_errors=True)


def test_output_the_user_cannot_write(job_factory, tmp_path):
    """Files are opened with the user's rights: a root-only dir makes the launch fail."""
    if os.getuid() != 0:
        pytest.skip("needs root")
    nobody = pwd.getpwnam("nobody")
    closed = tmp_path / "rootonly"
    closed.mkdir(mode=0o700)
    j = job_factory("#!/bin/bash\necho should not run\n", user_id=nobody.pw_uid,
                    group_id=nobody.pw_gid, user_name="nobody", work_dir="/tmp",
                    std_out=str(closed / "out.txt"))
    done = j.wait()
    assert done["reason"] == "launch_failed" and done["exit_code"] == 1 << 8
    assert not (closed / "out.txt").exists()
    assert "Could not open stdout file" in j.log.read_text()
