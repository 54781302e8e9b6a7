"""A Loom cluster of separate hosts made of network namespaces (ip netns,
veth pairs on a bridge; needs root): a controller host, two compute hosts
and a login host, each with its own address and /etc/hosts, talking over
TCP only (no host can reach the controller's Unix socket: each host's
slurm.conf names a StateSaveLocation of its own). Frames are authenticated
with the cluster key, or with munge (AuthType=auth/munge, a munged of the
test's own with its own key and socket).

 - an 8-task, 2-node job submitted from the login host finds its peers the
   way the seed 004 distributed-training script does (MASTER_ADDR from
   `scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1`, a
   MASTER_PORT) and exchanges data over TCP with a small rendezvous that
   stands in for torch.distributed; every rank's environment is checked;
 - srun from the login host runs a step across both compute hosts;
 - losing a compute host during a step ends the step and the job NODE_FAIL,
   and srun says why.
"""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import BIN, SANITIZER_MARKS, _cmdline, _pids, need

RENDEZVOUS = r'''
import json, os, socket, sys, time
rank, world = int(os.environ["SLURM_PROCID"]), int(os.environ["SLURM_NTASKS"])
addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
keys = ["SLURM_JOB_ID", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_NTASKS",
        "SLURM_NNODES", "SLURM_JOB_NODELIST", "SLURM_STEP_NODELIST", "SLURMD_NODENAME",
        "SLURM_TASKS_PER_NODE", "SLURM_SRUN_COMM_HOST", "SLURM_SRUN_COMM_PORT", "SLURM_GTIDS",
        "SLURM_STEP_ID", "SLURM_JOB_NUM_NODES", "SLURM_CPUS_ON_NODE", "MASTER_ADDR"]
env = {k: os.environ.get(k) for k in keys}
if rank == 0:
    srv = socket.create_server((addr, port))
    peers, parts = [], {0: socket.gethostbyname(addr)}
    while len(peers) < world - 1:
        c, (ip, _) = srv.accept()
        r = int(c.makefile().readline())
        parts[r] = ip
        peers.append(c)
    table = json.dumps(parts).encode() + b"\n"
    for c in peers:
        c.sendall(table)
        c.close()
else:
    for _ in range(200):
        try:
            c = socket.create_connection((addr, port), timeout=5)
            break
        except OSError:
            time.sleep(0.05)
    c.sendall(b"%d\n" % rank)
    table = c.makefile().readline()
    parts = json.loads(table)
print(json.dumps({"rank": rank, "env": env, "peers": {str(k): v for k, v in parts.items()}}))
'''

JOB = """#!/bin/bash
#SBATCH -N2 --ntasks-per-node=4 -o {out}
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=29555
srun {python} {prog}
"""


def _sh(*argv, check=True):
    return subprocess.run(list(argv), capture_output=True, text=True, check=check)


class Hosts:
    """ctl, cn1, cn2 and login, each a network namespace on one bridge."""

    NAMES = ("ctl", "cn1", "cn2", "login")

    def __init__(self, root, auth="key"):
        self.root = Path(root)
        self.tag = "%04x" % random.randrange(0x10000)
        self.net = "10.%d.%d" % (random.randrange(100, 250), random.randrange(1, 250))
        self.ns = {h: "loommh%s%s" % (self.tag, h) for h in self.NAMES}
        self.ip = {h: "%s.%d" % (self.net, i + 2) for i, h in enumerate(self.NAMES)}
        self.bridge = "lmb%s" % self.tag
        self.auth = auth
        self.procs = []
        self.made = []

    # -- the network --
    def build(self):
        _sh("ip", "link", "add", self.bridge, "type", "bridge")
        self.made.append(("link", self.bridge))
        _sh("ip", "link", "set", self.bridge, "up")
        hosts = "".join("%s %s\n" % (self.ip[h], h) for h in self.NAMES)
        for i, h in enumerate(self.NAMES):
            ns, inner, outer = self.ns[h], "lmi%s%d" % (self.tag, i), "lmo%s%d" % (self.tag, i)
            _sh("ip", "netns", "add", ns)
            self.made.append(("netns", ns))
            etc = Path("/etc/netns") / ns
            etc.mkdir(parents=True, exist_ok=True)
            (etc / "hosts").write_text("127.0.0.1 localhost\n" + hosts)
            self.made.append(("dir", str(etc)))
            _sh("ip", "link", "add", inner, "type", "veth", "peer", "name", outer)
            _sh("ip", "link", "set", inner, "netns", ns)
            _sh("ip", "link", "set", outer, "master", self.bridge, "up")
            self.made.append(("link", outer))
            self.exec(h, "ip", "addr", "add", self.ip[h] + "/24", "dev", inner)
            self.exec(h, "ip", "link", "set", inner, "up")
            self.exec(h, "ip", "link", "set", "lo", "up")

    def exec(self, host, *argv, **kw):
        return _sh("ip", "netns", "exec", self.ns[host], *argv, **kw)

    # -- the cluster --
    def conf_text(self, host):
        r = self.root
        state = r / "state" if host == "ctl" else r / ("no-state-on-" + host)
        lines = [
            "ClusterName=multihost",
            "SlurmctldHost=ctl(%s)" % self.ip["ctl"],
            "SlurmctldPort=6817", "SlurmdPort=6818",
            "SlurmUser=root",
            "StateSaveLocation=%s" % state,
            "SlurmdSpoolDir=%s/spool/%%n" % r,
            "SlurmctldLogFile=%s/log/loomctld.log" % r,
            "SlurmdLogFile=%s/log/loomd-%%n.log" % r,
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core_Memory",
            "DefMemPerCPU=100", "ReturnToService=2", "SlurmdTimeout=4", "KillWait=2",
            "MinJobAge=300",
        ]
        if self.auth == "munge":
            lines += ["AuthType=auth/munge", "AuthInfo=socket=%s/munge/munge.socket" % r]
        else:
            lines += ["AuthType=auth/slurm"]  # the cluster key only
        for h in ("cn1", "cn2"):
            lines.append("NodeName=%s NodeAddr=%s NodeHostname=%s CPUs=4 RealMemory=2000"
                         % (h, self.ip[h], h))
        lines.append("PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP")
        return "\n".join(lines) + "\n"

    def conf(self, host):
        return self.root / "etc" / host / "slurm.conf"

    def write_confs(self):
        key = os.urandom(32)
        for d in ("state", "spool", "log", "work"):
            (self.root / d).mkdir(parents=True, exist_ok=True)
        for h in self.NAMES:
            d = self.root / "etc" / h
            d.mkdir(parents=True, exist_ok=True)
            (d / "slurm.conf").write_text(self.conf_text(h))
            (d / "gres.conf").write_text("")
            if self.auth == "key" or h != "login":
                (d / "slurm.key").write_bytes(key)
                (d / "slurm.key").chmod(0o600)

    def env(self, host):
        return dict(os.environ, SLURM_CONF=str(self.conf(host)), TZ="UTC",
                    PATH="%s:%s" % (BIN, os.environ.get("PATH", "")))

    def spawn(self, host, argv, log):
        out = open(str(self.root / "log" / log), "ab")
        p = subprocess.Popen(["ip", "netns", "exec", self.ns[host]] + argv, stdout=out,
                             stderr=subprocess.STDOUT, env=self.env(host),
                             start_new_session=True)
        self.procs.append((p, out))
        return p

    def start(self):
        self.spawn("ctl", [str(BIN / "loomctld"), "-D", "-f", str(self.conf("ctl"))],
                   "loomctld.stderr")
        for h in ("cn1", "cn2"):
            self.spawn(h, [str(BIN / "loomd"), "-D", "-f", str(self.conf(h)), "-N", h,
                           "--allow-root-jobs"], "loomd-%s.stderr" % h)
        end = time.time() + 30
        while time.time() < end:
            p = self.run("login", "sinfo", "-h", "-o", "%t %D")
            if p.returncode == 0 and p.stdout.split() == ["idle", "2"]:
                return
            time.sleep(0.2)
        raise AssertionError("the hosts' nodes did not come up: %s\n%s" % (p.stderr, self.logs()))

    def run(self, host, cmd, *args, timeout=60, input=None):
        return subprocess.run(["ip", "netns", "exec", self.ns[host], str(BIN / cmd)] +
                              [str(a) for a in args], capture_output=True, text=True,
                              timeout=timeout, env=self.env(host), input=input,
                              cwd=str(self.root / "work"))

    def kill_host(self, host):
        """The host is lost: its link goes down, then everything in it dies
        (so no connection of it is closed cleanly: the others must notice)."""
        idx = self.NAMES.index(host)
        _sh("ip", "link", "set", "lmo%s%d" % (self.tag, idx), "down", check=False)
        pids = _sh("ip", "netns", "pids", self.ns[host], check=False).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass

    def logs(self):
        out = []
        for p in sorted((self.root / "log").glob("*")):
            out.append("==== %s ====\n%s" % (p.name, p.read_text(errors="replace")[-3000:]))
        return "\n".join(out)

    def sanitizer_reports(self):
        return [p.name for p in (self.root / "log").glob("*")
                if any(m in p.read_text(errors="replace") for m in SANITIZER_MARKS)]

    def teardown(self):
        for p, out in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p, out in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            out.close()
        for h in self.NAMES:  # supervisors and jobs outlive loomd by design
            if ("netns", self.ns[h]) in self.made:
                for pid in _sh("ip", "netns", "pids", self.ns[h], check=False).stdout.split():
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except OSError:
                        pass
        for kind, name in reversed(self.made):
            if kind == "netns":
                _sh("ip", "netns", "del", name, check=False)
            elif kind == "link":
                _sh("ip", "link", "del", name, check=False)
            elif kind == "dir":
                shutil.rmtree(name, ignore_errors=True)


def _can_make_namespaces():
    if os.geteuid() != 0:
        return "not root: network namespaces need root"
    if not shutil.which("ip"):
        return "the ip command (iproute2) is not installed"
    name = "loomprobe%d" % os.getpid()
    p = _sh("ip", "netns", "add", name, check=False)
    if p.returncode != 0:
        return "cannot create a network namespace: %s" % p.stderr.strip()
    _sh("ip", "netns", "del", name, check=False)
    p = _sh("ip", "link", "add", "lmprobe%d" % (os.getpid() % 1000), "type", "bridge",
            check=False)
    if p.returncode != 0:
        return "cannot create a bridge: %s" % p.stderr.strip()
    _sh("ip", "link", "del", "lmprobe%d" % (os.getpid() % 1000), check=False)
    return None


def _start_munged(root):
    """A munged of our own: its key, socket, pid, log and seed files under root/munge."""
    munged = shutil.which("munged") or "/usr/sbin/munged"
    if not os.path.exists(munged):
        pytest.skip("munged is not installed")
    d = Path(root) / "munge"
    d.mkdir(mode=0o700)
    key = d / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    p = subprocess.run([munged, "--socket=%s" % (d / "munge.socket"), "--key-file=%s" % key,
                        "--pid-file=%s" % (d / "munged.pid"), "--log-file=%s" % (d / "munged.log"),
                        "--seed-file=%s" % (d / "munged.seed"), "--force"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip("cannot start munged: %s" % p.stderr.strip())
    for _ in range(50):
        if (d / "munged.pid").exists():
            return int((d / "munged.pid").read_text())
        time.sleep(0.1)
    pytest.skip("munged did not write its pid file")


@pytest.fixture(params=["key", "munge"])
def hosts(request):
    why = _can_make_namespaces()
    if why:
        pytest.skip("multi-host test skipped: " + why)
    need("loomctld", "loomd", "loomstepd", "sbatch", "srun", "sinfo", "scontrol")
    root = tempfile.mkdtemp(prefix="loom-mh-", dir="/tmp")
    Path(root).chmod(0o755)
    munged = _start_munged(root) if request.param == "munge" else None
    h = Hosts(root, auth=request.param)
    try:
        h.build()
        h.write_confs()
        h.start()
        yield h
    finally:
        h.teardown()
        if munged:
            try:
                os.kill(munged, signal.SIGTERM)
            except OSError:
                pass
        bad = h.sanitizer_reports()
        failed = getattr(request.node, "rep_call", None)
        if bad or (failed is not None and failed.failed):
            print(h.logs())
        if bad:
            pytest.fail("sanitizer report in %s" % ", ".join(bad))
        if not bad and not (failed is not None and failed.failed):
            shutil.rmtree(root, ignore_errors=True)


def _check_ranks(h, out, job_id, comm_host):
    recs = sorted((json.loads(l) for l in out.splitlines() if l.startswith("{")),
                  key=lambda r: r["rank"])
    assert [r["rank"] for r in recs] == list(range(8)), out
    for r in recs:
        e, rank = r["env"], r["rank"]
        node = "cn1" if rank < 4 else "cn2"
        want = {"SLURM_JOB_ID": str(job_id), "SLURM_PROCID": str(rank),
                "SLURM_LOCALID": str(rank % 4), "SLURM_NODEID": "0" if rank < 4 else "1",
                "SLURM_NTASKS": "8", "SLURM_NNODES": "2", "SLURM_JOB_NUM_NODES": "2",
                "SLURM_JOB_NODELIST": "cn[1-2]", "SLURM_STEP_NODELIST": "cn[1-2]",
                "SLURMD_NODENAME": node, "SLURM_TASKS_PER_NODE": "4(x2)",
                "SLURM_GTIDS": "0,1,2,3" if rank < 4 else "4,5,6,7", "SLURM_STEP_ID": "0",
                "SLURM_SRUN_COMM_HOST": comm_host, "MASTER_ADDR": "cn1",
                "SLURM_CPUS_ON_NODE": "4"}
        for k, v in want.items():
            assert e.get(k) == v, (rank, k, e.get(k), v)
        # Every rank reached rank 0 and saw the others' addresses.
        assert r["peers"] == {str(i): h.ip["cn1" if i < 4 else "cn2"] for i in range(8)}, r


def test_distributed_job_across_hosts(hosts):
    h = hosts
    prog = h.root / "work" / "rendezvous.py"
    prog.write_text(RENDEZVOUS)
    out = h.root / "work" / "job-%j.out"
    script = JOB.format(out=out, python=sys.executable, prog=prog)
    p = h.run("login", "sbatch", "--parsable", input=script)
    assert p.returncode == 0, p.stderr + h.logs()
    job_id = int(p.stdout.strip())
    end = time.time() + 60
    while time.time() < end:
        q = h.run("login", "squeue", "-h", "-j", str(job_id), "-o", "%T")
        if q.stdout.strip() in ("", "COMPLETED"):
            break
        time.sleep(0.3)
    text = Path(str(out).replace("%j", str(job_id))).read_text()
    _check_ranks(h, text, job_id, h.ip["cn1"])
    # The same step started from the login host: srun makes the allocation there.
    p = h.run("login", "srun", "-N2", "--ntasks-per-node=4", "bash", "-c",
              "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1) "
              "MASTER_PORT=29556 exec %s %s" % (sys.executable, prog))
    assert p.returncode == 0, p.stderr + h.logs()
    job2 = int(json.loads(p.stdout.splitlines()[0])["env"]["SLURM_JOB_ID"])
    _check_ranks(h, p.stdout, job2, h.ip["login"])


def test_login_host_authentication(hosts):
    """The login host holds no key: with munge its commands prove who they are
    through munged; without munge (or with a munged that is not the
    cluster's) the controller refuses them."""
    h = hosts
    assert not (h.root / "etc" / "login" / "slurm.key").exists() or h.auth == "key"
    conf = h.conf("login")
    if h.auth == "munge":
        p = h.run("login", "squeue", "-h")
        assert p.returncode == 0, p.stderr
        bad = conf.read_text().replace("munge/munge.socket", "munge/nowhere.socket")
    else:
        (h.root / "etc" / "login" / "slurm.key").unlink()
        bad = conf.read_text()
    conf.write_text(bad)
    p = h.run("login", "squeue", "-h")
    assert p.returncode != 0, p.stdout


def test_lost_host_ends_step_node_fail(hosts):
    h = hosts
    srun = subprocess.Popen(["ip", "netns", "exec", h.ns["login"], str(BIN / "srun"), "-N2",
                             "-n2", "-l", "bash", "-c", "echo started; sleep 120"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=h.env("login"), cwd=str(h.root / "work"))
    seen = [srun.stdout.readline(), srun.stdout.readline()]
    assert sorted(seen) == ["0: started\n", "1: started\n"], seen
    jobs = h.run("login", "squeue", "-h", "-o", "%i").stdout.split()
    assert len(jobs) == 1
    start = time.time()
    h.kill_host("cn2")
    out, err = srun.communicate(timeout=60)
    assert time.time() - start < 30
    assert "srun: error: Node failure on cn2" in err, err
    assert srun.returncode != 0
    end = time.time() + 30
    while time.time() < end:
        st = h.run("login", "scontrol", "show", "job", jobs[0]).stdout
        if "JobState=NODE_FAIL" in st:
            break
        time.sleep(0.3)
    assert "JobState=NODE_FAIL" in st, st + h.logs()
    node = h.run("login", "sinfo", "-h", "-N", "-n", "cn2", "-o", "%t").stdout.strip()
    assert node.startswith("down"), node
