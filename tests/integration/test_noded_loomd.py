"""loomd against a fake controller (docs/proto/messages.md §4).

A small controller in this file speaks the signed frames of frame.md §3: it
accepts loomd's connection, answers node.register / node.heartbeat /
job.complete, and sends job.launch and job.kill. That lets these tests check
loomd's side of the protocol exactly, including the restart cases: loomd
killed while a job runs, and the controller going away while a completion is
unacknowledged.
"""
import hashlib
import hmac
import json
import os
import pwd
import grp
import queue
import signal
import socket
import struct
import subprocess
import threading
import time
from pathlib import Path

from ports import free_port

import pytest

BUILD = Path(os.environ.get("LOOM_BUILD_DIR", "build/dev"))
LOOMD = BUILD / "bin" / "loomd"

pytestmark = pytest.mark.skipif(not LOOMD.exists(), reason=f"{LOOMD} not built")


def encode(obj, key):
    obj = dict(obj)
    obj["auth"] = {"ts": int(time.time()), "nonce": int.from_bytes(os.urandom(7), "big"),
                   "sender": "ctld"}
    text = json.dumps(obj, separators=(",", ":")).encode()
    mac = hmac.new(key, text, hashlib.sha256).digest()
    body = text + b"\0" + mac
    return struct.pack(">I", len(body)) + body


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def decode(sock, key):
    head = recv_exact(sock, 4)
    if head is None:
        return None
    body = recv_exact(sock, struct.unpack(">I", head)[0])
    if body is None:
        return None
    text, _, mac = body.partition(b"\0")
    assert hmac.compare_digest(mac, hmac.new(key, text, hashlib.sha256).digest()), "bad MAC"
    return json.loads(text)


class FakeCtld:
    def __init__(self, port, key):
        self.key = key
        self.srv = socket.socket()
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind(("127.0.0.1", port))
        self.srv.listen(8)
        self.srv.settimeout(0.2)
        self.conn = None
        self.lock = threading.Lock()
        self.msgs = queue.Queue()  # requests from loomd
        self.replies = {}
        self.next_id = 1
        self.ack_complete = True
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.closed:
            try:
                c, _ = self.srv.accept()
            except (socket.timeout, OSError):
                continue
            with self.lock:
                self.conn = c
            threading.Thread(target=self._read, args=(c,), daemon=True).start()

    def send(self, obj):
        with self.lock:
            self.conn.sendall(encode(obj, self.key))

    def _read(self, c):
        while True:
            try:
                m = decode(c, self.key)
            except OSError:
                m = None
            if m is None:
                return
            if m["type"] == "reply":
                self.replies[m["id"]] = m
                continue
            self.msgs.put(m)
            t = m["type"]
            body = {"config_ok": True} if t == "node.register" else {}
            if t != "job.complete" or self.ack_complete:
                try:
                    self.send({"v": 1, "type": "reply", "id": m["id"], "rc": 0, "msg": "", **body})
                except OSError:
                    return

    def wait_msg(self, type_, timeout=15, pred=lambda m: True):
        end = time.time() + timeout
        while time.time() < end:
            try:
                m = self.msgs.get(timeout=max(0.01, end - time.time()))
            except queue.Empty:
                break
            if m["type"] == type_ and pred(m):
                return m
        raise AssertionError(f"no {type_} within {timeout}s")

    def request(self, type_, timeout=10, **body):
        rid = self.next_id
        self.next_id += 1
        self.send({"v": 1, "type": type_, "id": rid, **body})
        end = time.time() + timeout
        while time.time() < end:
            if rid in self.replies:
                return self.replies.pop(rid)
            time.sleep(0.01)
        raise AssertionError(f"no reply to {type_}")

    def drop(self):
        with self.lock:
            if self.conn:
                try:
                    self.conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                self.conn.close()
                self.conn = None

    def close(self):
        self.closed = True
        self.drop()
        self.srv.close()


class FakeUnixCtld:
    """The controller's Unix socket, for srun: step.create and step.complete.
    launch(step.create message, step id) starts the step on the node (as the
    controller does with step.launch) and returns the io_key."""

    def __init__(self, path, launch=None):
        self.path = str(path)
        self.launch = launch
        self.steps = []
        self.completed = []
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(self.path)
        self.srv.listen(8)
        self.srv.settimeout(0.2)
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.closed:
            try:
                c, _ = self.srv.accept()
            except (socket.timeout, OSError):
                continue
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        while True:
            head = recv_exact(c, 4)
            if head is None:
                return
            m = json.loads(recv_exact(c, struct.unpack(">I", head)[0]))
            body = {}
            if m["type"] == "step.create":
                self.steps.append(m)
                sid = len(self.steps) - 1
                key = self.launch(m, sid) if self.launch else ""
                body = {"step_id": sid, "nodes": "n1", "tasks_per_node": [m.get("ntasks", 1)],
                        "io_key": key, "job_nodes": "n1", "job_cpus": [1]}
            elif m["type"] == "step.complete":
                self.completed.append(m)
            out = json.dumps({"v": 1, "type": "reply", "id": m["id"], "rc": 0, "msg": "",
                              **body}).encode()
            c.sendall(struct.pack(">I", len(out)) + out)

    def close(self):
        self.closed = True
        self.srv.close()


def kill_supervisors(spool):
    """Supervisors outlive loomd: end those of this test (by pid)."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmd and cmd[0].endswith(b"loomstepd") and any(str(spool).encode() in a for a in cmd):
            try:
                os.kill(int(proc.name), signal.SIGKILL)
            except OSError:
                pass


class Node:
    def __init__(self, tmp, gres_extra="", env=None):
        self.tmp = tmp
        self.env = env
        self.ctld_port, self.port = free_port(), free_port()
        etc = tmp / "etc"
        etc.mkdir()
        (tmp / "dev").mkdir()
        for i in range(2):
            (tmp / "dev" / f"gpu{i}").write_text("")
        self.conf = etc / "slurm.conf"
        self.conf.write_text(
            "ClusterName=testc\nSlurmctldHost=localhost(127.0.0.1)\n"
            f"SlurmctldPort={self.ctld_port}\nStateSaveLocation={tmp}/state\n"
            f"SlurmdSpoolDir={tmp}/spool/%n\nGresTypes=gpu\nSlurmdTimeout=30\nKillWait=2\n"
            f"NodeName=n1 CPUs=4 RealMemory=1000 Gres=gpu:tst:2 Port={self.port}\n"
            "PartitionName=debug Nodes=ALL Default=YES\n")
        (etc / "gres.conf").write_text(
            gres_extra + f"NodeName=n1 Name=gpu Type=tst File={tmp}/dev/gpu[0-1]\n")
        self.key = os.urandom(32)
        keyfile = etc / "slurm.key"
        keyfile.write_bytes(self.key)
        keyfile.chmod(0o600)
        self.spool = tmp / "spool" / "n1"
        self.work = tmp / "work"
        self.work.mkdir()
        self.ctld = FakeCtld(self.ctld_port, self.key)
        self.logs = []
        self.proc = None
        self.start()

    def start(self):
        log = self.tmp / f"loomd{len(self.logs)}.log"
        self.logs.append(log)
        self.proc = subprocess.Popen([str(LOOMD), "-D", "-v", "-f", str(self.conf), "-N", "n1",
                                      "-L", str(log), "--allow-root-jobs"],
                                     stdout=subprocess.DEVNULL, stderr=open(log, "a"),
                                     env=self.env)

    def stop(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)
        self.proc.wait(timeout=10)

    def job(self, job_id, script, **extra):
        uid, gid = os.getuid(), os.getgid()
        now = int(time.time())
        rec = {"job_id": job_id, "name": f"j{job_id}", "user_id": uid, "group_id": gid,
               "user_name": pwd.getpwuid(uid).pw_name, "group_name": grp.getgrgid(gid).gr_name,
               "partition": "debug", "work_dir": str(self.work), "script": script,
               "env": [f"PATH={os.environ['PATH']}"], "nodes": "n1", "num_cpus": 1,
               "start_time": now, "end_time": now + 600, "batch_host": "n1",
               "alloc": [{"node": "n1", "cpus": [0], "mem": 100,
                          "gres": [{"name": "gpu", "type": "tst", "index": [1]}]}],
               "desc": {}}
        rec.update(extra)
        return rec

    def out(self, job_id):
        p = self.work / f"slurm-{job_id}.out"
        return p.read_text() if p.exists() else ""

    def close(self):
        if self.proc and self.proc.poll() is None:
            self.stop()
        self.ctld.close()
        # Supervisors outlive loomd: make sure none is left behind.
        kill_supervisors(self.spool)
        for log in self.logs:
            text = log.read_text() if log.exists() else ""
            for bad in ("ERROR: AddressSanitizer", "runtime error:", "LeakSanitizer"):
                assert bad not in text, f"{log}:\n{text}"


@pytest.fixture
def node(tmp_path):
    n = Node(tmp_path)
    yield n
    n.close()


def test_register(node):
    reg = node.ctld.wait_msg("node.register")
    assert reg["node"] == "n1" and reg["cpus"] == 4 and reg["real_memory"] == 1000
    assert reg["port"] == node.port and reg["version"] == "22.05.8"
    assert [(g["name"], g["type"], g["index"]) for g in reg["gres"]] == [
        ("gpu", "tst", 0), ("gpu", "tst", 1)]
    assert reg["gres"][1]["file"].endswith("/dev/gpu1")
    assert reg["jobs"] == []
    assert reg["auth"]["sender"] == "n1"


def test_launch_and_complete(node):
    node.ctld.wait_msg("node.register")
    r = node.ctld.request("job.launch", job=node.job(7, "#!/bin/bash\necho gpu=$CUDA_VISIBLE_DEVICES\nexit 4\n"))
    assert r["rc"] == 0
    done = node.ctld.wait_msg("job.complete")
    assert done["job_id"] == 7 and done["node"] == "n1"
    assert done["exit_code"] == 4 << 8 and done["reason"] == ""
    assert node.out(7) == "gpu=1\n"
    # Once acked, the supervisor removes the job dir.
    end = time.time() + 10
    while (node.spool / "job7").exists() and time.time() < end:
        time.sleep(0.05)
    assert not (node.spool / "job7").exists()


def test_launch_bad_request(node):
    node.ctld.wait_msg("node.register")
    r = node.ctld.request("job.launch", job={"job_id": 8})
    assert r["rc"] == "LOOM_EPROTO"


def test_kill_time_limit(node):
    node.ctld.wait_msg("node.register")
    node.ctld.request("job.launch", job=node.job(9, "#!/bin/bash\necho up\nsleep 60\n"))
    end = time.time() + 10
    while "up" not in node.out(9) and time.time() < end:
        time.sleep(0.05)
    r = node.ctld.request("job.kill", job_id=9, signal=9, reason="timeout", kill_wait=2)
    assert r["rc"] == 0
    done = node.ctld.wait_msg("job.complete")
    assert done["reason"] == "timeout"
    assert done["exit_code"] & 0x7F == signal.SIGTERM
    lines = node.out(9).splitlines()
    assert lines[0] == "up"
    assert lines[1].startswith("slurmstepd-n1: error: *** JOB 9 ON n1 CANCELLED AT ")
    assert lines[1].endswith(" DUE TO TIME LIMIT ***")
    r = node.ctld.request("job.kill", job_id=4242, signal=9, reason="cancel", kill_wait=2)
    assert r["rc"] == "LOOM_EINVAL_JOBID"


def test_loomd_restart_while_job_runs(node):
    node.ctld.wait_msg("node.register")
    node.ctld.request("job.launch",
                      job=node.job(11, "#!/bin/bash\necho start\nsleep 3\necho end\nexit 5\n"))
    end = time.time() + 10
    while "start" not in node.out(11) and time.time() < end:
        time.sleep(0.05)
    node.stop(signal.SIGKILL)
    node.ctld.drop()
    node.start()
    reg = node.ctld.wait_msg("node.register")
    assert reg["jobs"] == [{"job_id": 11, "run": 0, "state": "running"}]
    done = node.ctld.wait_msg("job.complete", timeout=20)
    assert done["job_id"] == 11 and done["exit_code"] == 5 << 8
    assert node.out(11) == "start\nend\n"


def test_job_ends_while_loomd_down(node):
    node.ctld.wait_msg("node.register")
    node.ctld.request("job.launch", job=node.job(12, "#!/bin/bash\nsleep 1\nexit 2\n"))
    node.stop(signal.SIGKILL)
    node.ctld.drop()
    time.sleep(2.5)  # the job ends meanwhile; its supervisor waits for a loomd
    assert (node.spool / "job12" / "status.json").exists()
    node.start()
    reg = node.ctld.wait_msg("node.register")
    assert reg["jobs"][0]["job_id"] == 12 and reg["jobs"][0]["state"] == "done"
    assert reg["jobs"][0]["exit_code"] == 2 << 8
    done = node.ctld.wait_msg("job.complete")
    assert done["exit_code"] == 2 << 8
    end = time.time() + 10
    while (node.spool / "job12").exists() and time.time() < end:
        time.sleep(0.05)
    assert not (node.spool / "job12").exists()


def test_completion_resent_after_controller_restart(node):
    node.ctld.wait_msg("node.register")
    node.ctld.ack_complete = False
    node.ctld.request("job.launch", job=node.job(13, "#!/bin/bash\nexit 0\n"))
    node.ctld.wait_msg("job.complete")
    assert (node.spool / "job13").exists(), "kept until the controller acks"
    node.ctld.ack_complete = True
    node.ctld.drop()  # the controller "restarts"
    reg = node.ctld.wait_msg("node.register")
    assert reg["jobs"] == [{"job_id": 13, "run": 0, "state": "done", "exit_code": 0,
                            "end_time": reg["jobs"][0]["end_time"], "reason": ""}]
    node.ctld.wait_msg("job.complete", pred=lambda m: m["job_id"] == 13)
    end = time.time() + 10
    while (node.spool / "job13").exists() and time.time() < end:
        time.sleep(0.05)
    assert not (node.spool / "job13").exists()


def test_node_port_refuses_unsigned_frames(node):
    node.ctld.wait_msg("node.register")
    for payload in (struct.pack(">I", 13) + b'{"v":1,"id":1', b"\xff\xff\xff\xff",
                    struct.pack(">I", 40) + json.dumps({"v": 1, "type": "ping", "id": 1}).encode().ljust(40)):
        s = socket.create_connection(("127.0.0.1", node.port), timeout=5)
        s.sendall(payload)
        s.shutdown(socket.SHUT_WR)
        assert s.recv(100) == b""  # dropped without an answer
        s.close()
    # A signed ping is answered; loomd still serves its controller.
    s = socket.create_connection(("127.0.0.1", node.port), timeout=5)
    s.sendall(encode({"v": 1, "type": "ping", "id": 5}, node.key))
    assert decode(s, node.key)["rc"] == 0
    s.close()
    assert node.ctld.request("ping")["rc"] == 0


def test_shutdown_leaves_jobs_running(node):
    node.ctld.wait_msg("node.register")
    node.ctld.request("job.launch", job=node.job(14, "#!/bin/bash\nsleep 2\necho done\n"))
    node.stop(signal.SIGTERM)
    assert node.proc.returncode == 0
    node.ctld.drop()
    node.start()
    node.ctld.wait_msg("node.register")
    done = node.ctld.wait_msg("job.complete", timeout=20)
    assert done["job_id"] == 14 and done["exit_code"] == 0
    assert node.out(14) == "done\n"


def test_srun_in_batch(node):
    node.ctld.wait_msg("node.register")
    (node.tmp / "state").mkdir()
    def launch(m, sid):
        n = m.get("ntasks", 1)
        body = {k: m[k] for k in ("argv", "env", "cwd", "umask", "input") if k in m}
        body.update(job_id=15, step_id=sid, uid=os.getuid(), gid=os.getgid(), node_id=0,
                    nodes="n1", tasks_per_node=[n], ntasks=n, ranks=list(range(n)), cpus=[0],
                    gpus=[1], io=dict(m["io"], key="k%d" % sid))
        assert node.ctld.request("step.launch", **body)["rc"] == 0
        return "k%d" % sid

    unix = FakeUnixCtld(node.tmp / "state" / "loomctld.sock", launch)
    try:
        script = (
            "#!/bin/bash\n"
            "srun -l -n 2 bash -c 'echo rank=$SLURM_PROCID step=$SLURM_STEP_ID "
            "local=$SLURM_LOCALID gpus=$CUDA_VISIBLE_DEVICES ntasks=$SLURM_NTASKS "
            "port=${SLURM_SRUN_COMM_PORT:+set}'\n"
            "echo rc=$?\n"
            "srun bash -c 'exit 3'\necho rc=$?\n"
            "srun bash -c 'kill -9 $$'\necho rc=$?\n"
            "srun -n 4 bash -c 'exit $((SLURM_PROCID == 2 ? 5 : 2))'\necho rc=$?\n"
            "srun --export=NONE /usr/bin/env | grep -c '^PATH=' ; true\n")
        env = [f"PATH={BUILD / 'bin'}:{os.environ['PATH']}", f"SLURM_CONF={node.conf}"]
        node.ctld.request("job.launch", job=node.job(15, script, env=env))
        done = node.ctld.wait_msg("job.complete", timeout=30)
        out = node.out(15)
        assert done["exit_code"] == 0, out
        lines = out.splitlines()
        assert sorted(lines[:2]) == ["0: rank=0 step=0 local=0 gpus=1 ntasks=2 port=set",
                                     "1: rank=1 step=0 local=1 gpus=1 ntasks=2 port=set"], out
        assert lines[2:] == ["rc=0", "srun: error: n1: task 0: Exited with exit code 3", "rc=3",
                             "srun: error: n1: task 0: Killed",
                             "srun: Force Terminated StepId=15.2", "rc=137",
                             "srun: error: n1: tasks 0-1,3: Exited with exit code 2",
                             "srun: error: n1: task 2: Exited with exit code 5", "rc=5",
                             "0"], out
        assert [m.get("ntasks", 1) for m in unix.steps] == [2, 1, 1, 4, 1]
        assert [m["exit_code"] for m in unix.completed] == [0, 3 << 8, 9, 5 << 8, 0]
    finally:
        unix.close()


FAKE_NVML = r"""
#include <stdio.h>
#include <string.h>
int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned *n) { *n = 2; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h) { *h = (void *)(long)(i + 1); return 0; }
int nvmlDeviceGetName(void *h, char *name, unsigned len)
{ snprintf(name, len, "NVIDIA TST 80GB HBM3"); return 0; }
int nvmlDeviceGetMinorNumber(void *h, unsigned *m) { *m = 3 + (unsigned)(long)h; return 0; }
"""


def test_gpus_from_nvml(tmp_path):
    """AutoDetect=nvml with a (fake) libnvidia-ml.so.1: NVML's devices, gres.conf's type."""
    lib = tmp_path / "nvml"
    lib.mkdir()
    (lib / "fake.c").write_text(FAKE_NVML)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(lib / "libnvidia-ml.so.1"),
                    str(lib / "fake.c")], check=True)
    env = dict(os.environ, LD_LIBRARY_PATH=str(lib))
    node = Node(tmp_path, gres_extra="AutoDetect=nvml\n", env=env)
    try:
        reg = node.ctld.wait_msg("node.register")
        assert [(g["type"], g["index"], g["file"]) for g in reg["gres"]] == [
            ("tst", 0, "/dev/nvidia4"), ("tst", 1, "/dev/nvidia5")]
    finally:
        node.close()


def test_gpus_without_nvml_library(tmp_path):
    """AutoDetect=nvml without the library: the File= lines, as Slurm falls back."""
    import ctypes
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
        pytest.skip("this host has NVML")
    except OSError:
        pass
    env = dict(os.environ, LD_LIBRARY_PATH=str(tmp_path / "none"))
    node = Node(tmp_path, gres_extra="AutoDetect=nvml\n", env=env)
    try:
        reg = node.ctld.wait_msg("node.register")
        assert [g["file"] for g in reg["gres"]] == [str(tmp_path / "dev" / "gpu0"),
                                                    str(tmp_path / "dev" / "gpu1")]
    finally:
        node.close()


def test_job_dir_permissions(node):
    node.ctld.wait_msg("node.register")
    node.ctld.request("job.launch", job=node.job(16, "#!/bin/bash\nsleep 2\n"))
    d = node.spool / "job16"
    assert (d / "spec.json").stat().st_mode & 0o777 == 0o600
    assert d.stat().st_mode & 0o777 == (0o711 if os.getuid() == 0 else 0o700)
    assert (node.spool / "loomd.sock").stat().st_mode & 0o077 == 0
    end = time.time() + 10
    while not ((d / "stepd.sock").exists() and (d / "script").exists()) and time.time() < end:
        time.sleep(0.05)
    assert (d / "stepd.sock").stat().st_mode & 0o077 == 0
    assert (d / "script").stat().st_mode & 0o777 == 0o700
    node.ctld.wait_msg("job.complete")
