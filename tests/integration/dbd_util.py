"""Helpers of the loomdbd integration tests: a throwaway loomdbd (SQLite, or
PostgreSQL when LOOM_TEST_PGSQL is set: a fresh database per test), and a
small client that speaks the frame format (docs/proto/frame.md) with the
HMAC trailer, to insert job records through dbd.job as loomctld will."""
import hashlib
import hmac
import json
import os
import socket
import struct
import subprocess
import time

import pytest

from ports import free_port

BUILD = os.environ.get("LOOM_BUILD_DIR", os.path.join(os.path.dirname(__file__), "../../build/dev"))
BIN = os.path.join(BUILD, "bin")
BACKENDS = ["sqlite"] + (["pgsql"] if os.environ.get("LOOM_TEST_PGSQL") else [])


def pg_admin(sql):
    info = os.environ["LOOM_TEST_PGSQL"]
    subprocess.run(["psql", info, "-q", "-c", sql], check=True, capture_output=True)


def pg_slurmdbd_conf(directory, prefix, port):
    """PostgreSQL (LOOM_TEST_PGSQL): a fresh database <prefix>_<pid>_<ms> and a
    slurmdbd.conf in directory naming it and DbdPort=port; returns its name
    (drop it with pg_admin when done)."""
    dbname = "%s_%d_%d" % (prefix, os.getpid(), int(time.time() * 1000) % 10**9)
    pg_admin("CREATE DATABASE %s" % dbname)
    info = dict(kv.split("=", 1) for kv in os.environ["LOOM_TEST_PGSQL"].split())
    with open(os.path.join(str(directory), "slurmdbd.conf"), "w") as f:
        f.write("StorageType=accounting_storage/pgsql\nStorageHost=%s\nStoragePort=%s\n"
                "StorageUser=%s\nStorageLoc=%s\nDbdPort=%d\n"
                % (info["host"], info["port"], info["user"], dbname, port))
    return dbname


class Dbd:
    """loomdbd in tmp with cluster "bench"; backend "sqlite" or "pgsql"."""

    def __init__(self, tmp, backend="sqlite"):
        self.tmp = str(tmp)
        self.backend = backend
        self.state = os.path.join(self.tmp, "state")
        os.makedirs(self.state, exist_ok=True)
        self.port = free_port()
        self.conf = os.path.join(self.tmp, "slurm.conf")
        with open(self.conf, "w") as f:
            f.write("ClusterName=bench\nSlurmctldHost=localhost\n"
                    "StateSaveLocation=%s\nGresTypes=gpu\nAccountingStorageTRES=gres/gpu\n"
                    "AccountingStorageType=accounting_storage/slurmdbd\n"
                    "AccountingStoragePort=%d\n"
                    "NodeName=n1 CPUs=2 RealMemory=1000\nPartitionName=debug Nodes=ALL Default=YES\n"
                    % (self.state, self.port))
        self.key = os.urandom(32)
        keypath = os.path.join(self.tmp, "slurm.key")
        with open(keypath, "wb") as f:
            f.write(self.key)
        os.chmod(keypath, 0o600)
        self.dbname = None
        if backend == "pgsql":
            self.dbname = pg_slurmdbd_conf(self.tmp, "loomit", self.port)
        self.log = os.path.join(self.tmp, "loomdbd.log")
        self.env = dict(os.environ, SLURM_CONF=self.conf, TZ="UTC")
        self.env.pop("LOOM_DBD_ADDR", None)
        self.proc = subprocess.Popen([os.path.join(BIN, "loomdbd"), "-D", "-f", self.conf,
                                      "-L", self.log], env=self.env)
        self.nonce = 0
        self._wait_listening(os.path.join(self.state, "loomdbd.sock"))

    def _wait_listening(self, sock, timeout=60):
        """Until the Unix socket exists and the TCP port takes connections
        (PostgreSQL's schema may take a while on a loaded host)."""
        end = time.time() + timeout
        while time.time() < end and self.proc.poll() is None:
            if os.path.exists(sock):
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=5).close()
                    return
                except OSError:
                    pass
            time.sleep(0.05)
        log = open(self.log).read()[-4000:] if os.path.exists(self.log) else "(no log)"
        self.stop_quietly()
        raise AssertionError("loomdbd is not listening on port %d (exit %s):\n%s"
                             % (self.port, self.proc.poll(), log))

    def stop_quietly(self):
        """Stop it (and drop its database) without the log checks: a failed start."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        if self.dbname:
            pg_admin("DROP DATABASE IF EXISTS %s WITH (FORCE)" % self.dbname)
            self.dbname = None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        if self.dbname:
            pg_admin("DROP DATABASE IF EXISTS %s WITH (FORCE)" % self.dbname)
        with open(self.log) as f:
            text = f.read()
        for bad in ("ERROR: AddressSanitizer", "runtime error:", "LeakSanitizer"):
            assert bad not in text, text

    def run(self, cmd, stdin=subprocess.DEVNULL):
        """Run a command line (a list) with the test's environment."""
        argv = [os.path.join(BIN, cmd[0])] + cmd[1:]
        return subprocess.run(argv, capture_output=True, text=True, env=self.env, stdin=stdin,
                              timeout=60)

    def call(self, msg, sign=True):
        """Send one message over TCP (signed with the key) and return the reply."""
        self.nonce += 1
        msg = dict(msg, v=1, id=self.nonce)
        if sign:
            msg["auth"] = {"ts": int(time.time()), "nonce": self.nonce, "sender": "ctld"}
        body = json.dumps(msg, separators=(",", ":")).encode()
        if sign:
            body += b"\0" + hmac.new(self.key, body, hashlib.sha256).digest()
        with socket.create_connection(("127.0.0.1", self.port), timeout=30) as s:
            s.sendall(struct.pack(">I", len(body)) + body)
            try:
                hdr = self._recv(s, 4)
            except ConnectionResetError:  # a dropped connection may end in a reset
                return None
            if not hdr:
                return None
            data = self._recv(s, struct.unpack(">I", hdr)[0])
        text = data.split(b"\0")[0]
        return json.loads(text)

    @staticmethod
    def _recv(s, n):
        buf = b""
        while len(buf) < n:
            chunk = s.recv(n - len(buf))
            if not chunk:
                return buf
            buf += chunk
        return buf


@pytest.fixture(params=BACKENDS)
def dbd(request, tmp_path):
    """A fresh Dbd per back end (import it into the test file); stopped after."""
    d = Dbd(tmp_path, request.param)
    yield d
    d.stop()
