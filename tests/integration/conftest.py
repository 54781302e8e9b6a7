"""Shared fixtures of the integration tests: a real Loom cluster in a temp dir.

The `cluster` fixture writes a slurm.conf for N emulated nodes (each a loomd on
its own port, with fake GPUs: one plain file per device under tmp/dev/), a
gres.conf and a cluster key, starts loomctld and the loomd's on free ports
without root, waits until every node is IDLE, and yields a `Cluster` object:

    cluster.run("sbatch", "--wrap=true")        # a command, SLURM_CONF set
    cluster.rpc("job.info", job_ids=[1])        # one request over the Unix socket
    cluster.wait_job(5, "COMPLETED")            # poll until a state
    cluster.kill_ctld(); cluster.start_ctld()   # crash and restart the controller

`make_cluster(nodes=2, gpus=2, conf_extra=..., start=True)` builds one with
other parameters. On teardown every daemon is stopped (SIGTERM, then SIGKILL)
and the test FAILS when any daemon log holds a sanitizer report. Logs of a
failed test are printed. The build directory comes from LOOM_BUILD_DIR
(binaries in $LOOM_BUILD_DIR/bin).

Other helpers may add small fixtures at the END of this file.
"""
import grp
import json
import os
import pwd
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
from pathlib import Path

from ports import free_port  # noqa: F401 (tests import it from here)

import pytest

SOURCE = Path(os.environ.get("LOOM_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD = Path(os.environ.get("LOOM_BUILD_DIR", SOURCE / "build" / "dev"))
BIN = BUILD / "bin"
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "runtime error:", "LeakSanitizer")
START_TIMEOUT = 30.0


def have(binary):
    return (BIN / binary).exists()


def need(*binaries):
    """Skip the test when a binary has not been built yet."""
    missing = [b for b in binaries if not have(b)]
    if missing:
        pytest.skip("not built: " + ", ".join(missing))


# ---- the wire protocol (docs/proto/frame.md) ------------------------------------

def frame(obj):
    data = json.dumps(obj, separators=(",", ":")).encode()
    return struct.pack(">I", len(data)) + data


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def recv_frame(sock):
    """One frame's JSON (without a MAC trailer), or None at EOF."""
    head = recv_exact(sock, 4)
    if head is None:
        return None
    (n,) = struct.unpack(">I", head)
    body = recv_exact(sock, n)
    if body is None:
        return None
    return json.loads(body.split(b"\0")[0])


class Rpc:
    """A tiny client for the controller's Unix socket (plain frames, SO_PEERCRED)."""

    def __init__(self, path, timeout=30.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(str(path))
        self.next_id = 0

    def call(self, type_, **body):
        self.next_id += 1
        msg = {"v": 1, "type": type_, "id": self.next_id}
        msg.update(body)
        self.sock.sendall(frame(msg))
        reply = recv_frame(self.sock)
        if reply is None:
            raise ConnectionError("controller closed the connection")
        return reply

    def close(self):
        self.sock.close()


# ---- the cluster --------------------------------------------------------------------

class Daemon:
    def __init__(self, name, argv, log, env):
        self.name, self.argv, self.log, self.env = name, argv, log, env
        self.proc = None

    def start(self):
        self.out = open(str(self.log) + ".stderr", "ab")
        self.proc = subprocess.Popen(self.argv, stdout=self.out, stderr=subprocess.STDOUT,
                                     env=self.env, start_new_session=True)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, sig=signal.SIGTERM, timeout=10.0):
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(sig)
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=timeout)
        rc = self.proc.returncode
        self.proc = None
        self.out.close()
        return rc


class Cluster:
    def __init__(self, root, nodes=2, cpus=4, memory=4000, gpus=2, gpu_type="tesla",
                 conf_extra="", partitions=None, ctld_args=()):
        self.root = Path(root)
        self.nnodes, self.cpus, self.memory = nodes, cpus, memory
        self.gpus, self.gpu_type = gpus, gpu_type
        self.ctld_args = list(ctld_args)
        self.user = pwd.getpwuid(os.getuid()).pw_name
        self.group = grp.getgrgid(os.getgid()).gr_name
        self.ctld_port = free_port()
        self.node_names = ["node%d" % (i + 1) for i in range(nodes)]
        self.node_ports = {n: free_port() for n in self.node_names}
        self.root.chmod(0o755)  # other users reach the socket (mkdtemp makes it 0700)
        for d in ("state", "spool", "log", "work", "dev"):
            (self.root / d).mkdir(parents=True, exist_ok=True)
        self.conf = self.root / "slurm.conf"
        self.state = self.root / "state"
        self.logdir = self.root / "log"
        self.work = self.root / "work"
        self.sock = self.state / "loomctld.sock"
        self._write_conf(conf_extra, partitions)
        self.env = dict(os.environ, SLURM_CONF=str(self.conf), TZ="UTC",
                        PATH="%s:%s" % (BIN, os.environ.get("PATH", "")))
        self.env.setdefault("ASAN_OPTIONS", "detect_leaks=1")
        self.ctld = None
        self.loomds = {}

    # -- configuration --
    def _write_conf(self, extra, partitions):
        lines = [
            "ClusterName=loomtest",
            "SlurmctldHost=localhost(127.0.0.1)",
            "SlurmctldPort=%d" % self.ctld_port,
            "SlurmUser=%s" % self.user,
            "StateSaveLocation=%s" % (self.root / "state"),
            "SlurmdSpoolDir=%s/%%n" % (self.root / "spool"),
            "SlurmctldLogFile=%s" % (self.root / "log" / "loomctld.log"),
            "SlurmdLogFile=%s/loomd-%%n.log" % (self.root / "log"),
            "GresTypes=gpu",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core_Memory",
            "DefMemPerCPU=100",
            "ReturnToService=2",
            "SlurmdTimeout=30",
            "KillWait=2",
            "MinJobAge=300",
            "MaxJobCount=50000",
        ]
        lines += [l for l in extra.splitlines() if l.strip()]
        gres = []
        for name in self.node_names:
            line = ("NodeName=%s NodeHostname=localhost NodeAddr=127.0.0.1 Port=%d CPUs=%d "
                    "RealMemory=%d" % (name, self.node_ports[name], self.cpus, self.memory))
            if self.gpus:
                line += " Gres=gpu:%s:%d" % (self.gpu_type, self.gpus)
                devdir = self.root / "dev" / name
                devdir.mkdir(parents=True, exist_ok=True)
                for i in range(self.gpus):
                    (devdir / ("gpu%d" % i)).touch()
                gres.append("NodeName=%s Name=gpu Type=%s File=%s/gpu[0-%d]"
                            % (name, self.gpu_type, devdir, self.gpus - 1))
            lines.append(line)
        lines += partitions or ["PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE "
                                "State=UP"]
        self.conf.write_text("\n".join(lines) + "\n")
        (self.root / "gres.conf").write_text("\n".join(gres) + "\n")
        key = self.root / "slurm.key"
        key.write_bytes(os.urandom(32))
        key.chmod(0o600)

    # -- daemons --
    def start_ctld(self, *extra_args, wait=True):
        argv = [str(BIN / "loomctld"), "-D", "-f", str(self.conf)] + self.ctld_args + list(
            extra_args)
        self.ctld = Daemon("loomctld", argv, self.logdir / "loomctld.log", self.env)
        self.ctld.start()
        if wait:
            self.wait_for(lambda: self.ping(), "loomctld to answer ping")

    def start_node(self, name):
        argv = [str(BIN / "loomd"), "-D", "-f", str(self.conf), "-N", name, "--allow-root-jobs"]
        d = Daemon(name, argv, self.logdir / ("loomd-%s.log" % name), self.env)
        d.start()
        self.loomds[name] = d
        return d

    def start(self):
        need("loomctld", "loomd", "loomstepd")
        self.start_ctld()
        for name in self.node_names:
            self.start_node(name)
        self.wait_nodes("IDLE")
        return self

    def kill_ctld(self, sig=signal.SIGKILL):
        if self.ctld:
            self.ctld.stop(sig)

    def stop_node(self, name, sig=signal.SIGTERM):
        d = self.loomds.get(name)
        if d:
            d.stop(sig)

    def stop(self):
        for d in list(self.loomds.values()):
            d.stop()
        if self.ctld:
            self.ctld.stop()
        self.reap_supervisors()

    def reap_supervisors(self):
        """Kill the step supervisors of this cluster and their jobs.

        Supervisors outlive loomd by design (a restarted loomd re-attaches
        them), so stopping the daemons leaves them waiting; each is a session
        leader (setsid), so its session holds its job's processes too."""
        sessions = set()
        for pid in _pids():
            cmd = _cmdline(pid)
            if cmd and cmd[0].endswith("loomstepd") and any(str(self.root) in a for a in cmd):
                sessions.add(pid)
        # a job's own session (a batch script's setsid) too: every descendant
        children = {}
        for pid in _pids():
            children.setdefault(_stat_field(pid, 1), []).append(pid)
        doomed, todo = set(), list(sessions)
        while todo:
            pid = todo.pop()
            if pid not in doomed:
                doomed.add(pid)
                todo.extend(children.get(pid, []))
        doomed |= {pid for pid in _pids() if _session(pid) in sessions}
        for pid in doomed:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    # -- talking to it --
    def ping(self):
        try:
            return self.rpc("ping").get("rc") == 0
        except OSError:
            return False

    def rpc(self, type_, timeout=30.0, **body):
        c = Rpc(self.sock, timeout)
        try:
            return c.call(type_, **body)
        finally:
            c.close()

    def run(self, cmd, *args, check=False, timeout=60, input=None, env=None, cwd=None):
        """Run a command from the build with SLURM_CONF set; returns CompletedProcess."""
        need(cmd)
        e = dict(self.env, **(env or {}))
        p = subprocess.run([str(BIN / cmd)] + [str(a) for a in args], capture_output=True,
                           text=True, timeout=timeout, input=input, env=e,
                           cwd=str(cwd or self.work))
        if check and p.returncode != 0:
            raise AssertionError("%s %s failed (%d): %s%s" % (cmd, " ".join(map(str, args)),
                                                             p.returncode, p.stdout, p.stderr))
        return p

    def submit(self, script="#!/bin/sh\ntrue\n", **desc):
        """job.submit over the socket (no sbatch needed); returns the reply."""
        desc.setdefault("name", "test")
        desc.setdefault("work_dir", str(self.work))
        desc.setdefault("env", ["PATH=" + os.environ.get("PATH", "/usr/bin:/bin")])
        return self.rpc("job.submit", job=desc, script=script)

    def jobs(self, *ids):
        body = {"job_ids": list(ids)} if ids else {}
        reply = self.rpc("job.info", **body)
        return {j["job_id"]: j for j in reply.get("jobs", [])}

    def job(self, job_id):
        return self.jobs().get(job_id)

    def nodes(self):
        return {n["name"]: n for n in self.rpc("node.info").get("nodes", [])}

    @staticmethod
    def state_of(rec):
        st = rec.get("state")
        return st[0] if isinstance(st, list) else st

    def wait_for(self, pred, what, timeout=START_TIMEOUT, interval=0.1):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                if pred():
                    return
            except (OSError, ValueError):
                pass
            if self.ctld and self.ctld.proc and self.ctld.proc.poll() is not None:
                raise AssertionError("loomctld exited (%s) while waiting for %s\n%s"
                                     % (self.ctld.proc.returncode, what, self.logs()))
            time.sleep(interval)
        raise AssertionError("timed out after %.0fs waiting for %s\n%s" % (timeout, what,
                                                                          self.logs()))

    def wait_nodes(self, state, names=None, timeout=START_TIMEOUT):
        names = names or self.node_names

        def ok():
            nodes = self.nodes()
            return all(self.state_of(nodes[n]) == state for n in names)

        self.wait_for(ok, "nodes %s to be %s" % (",".join(names), state), timeout)

    def wait_job(self, job_id, *states, timeout=60):
        """Wait until the job's base state is one of states; return its record."""
        found = {}

        def ok():
            rec = self.job(job_id)
            found["rec"] = rec
            return rec is not None and self.state_of(rec) in states and (
                "COMPLETING" not in rec.get("state", []))

        try:
            self.wait_for(ok, "job %d to be %s" % (job_id, "/".join(states)), timeout)
        except AssertionError as e:
            raise AssertionError("%s\nlast record: %s" % (e, found.get("rec"))) from None
        return found["rec"]

    # -- logs --
    def log_files(self):
        return sorted(p for p in self.logdir.iterdir() if p.is_file())

    def logs(self, tail=4000):
        out = []
        for p in self.log_files():
            text = p.read_text(errors="replace")
            out.append("==== %s ====\n%s" % (p.name, text[-tail:]))
        return "\n".join(out)

    def sanitizer_reports(self):
        bad = []
        for p in self.log_files():
            text = p.read_text(errors="replace")
            if any(m in text for m in SANITIZER_MARKS):
                bad.append(p.name)
        return bad


def _pids():
    return [int(d) for d in os.listdir("/proc") if d.isdigit()]


def _cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return None


def _stat_field(pid, k):
    """Field k after the command of /proc/pid/stat (1: ppid, 3: session), or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[k])
    except (OSError, IndexError, ValueError):
        return None


def _session(pid):
    """The session id of pid (field 6 of /proc/pid/stat), or None."""
    return _stat_field(pid, 3)


@pytest.fixture
def make_cluster(request):
    """Factory: make_cluster(nodes=2, gpus=2, ..., start=True) -> Cluster."""
    made = []

    def make(start=True, **kw):
        need("loomctld")
        root = tempfile.mkdtemp(prefix="loom-", dir="/tmp")  # short: Unix socket paths
        c = Cluster(root, **kw)
        made.append(c)
        if start:
            c.start()
        return c

    yield make
    failed = getattr(request.node, "rep_call", None)
    for c in made:
        try:
            c.stop()
        finally:
            bad = c.sanitizer_reports()
            if (failed is not None and failed.failed) or bad:
                print(c.logs())
            if bad:
                pytest.fail("sanitizer report in %s" % ", ".join(bad))
            if not bad and not (failed is not None and failed.failed):
                shutil.rmtree(c.root, ignore_errors=True)


@pytest.fixture
def cluster(make_cluster):
    """A started two-node cluster (4 CPUs, 4000 MiB and 2 fake GPUs per node)."""
    return make_cluster()


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the item, so fixtures can see a failure."""
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)
