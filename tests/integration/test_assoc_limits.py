"""The controller's associations and their enforcement (issue 7).

A real loomdbd (SQLite; PostgreSQL too when LOOM_TEST_PGSQL is set) beside
loomctld and two loomd: sacctmgr fills the accounting tree, loomctld loads
it (and its cache), and AccountingStorageEnforce turns it into Slurm 22.05's
rejections at submit and pending reasons in squeue."""
import os
import subprocess
import time

import pytest

from conftest import BIN, need
from dbd_util import pg_admin
from ports import free_port

BACKENDS = ["sqlite"] + (["pgsql"] if os.environ.get("LOOM_TEST_PGSQL") else [])
ENFORCE = "associations,limits,qos,safe"


class AcctCluster:
    """loomdbd + a cluster sharing its slurm.conf and StateSaveLocation."""

    def __init__(self, make_cluster, backend, enforce=ENFORCE, **kw):
        self.dbd_port = free_port()
        extra = ("AccountingStorageType=accounting_storage/slurmdbd\n"
                 "AccountingStoragePort=%d\nAccountingStorageEnforce=%s\n"
                 "AccountingStorageTRES=gres/gpu\n" % (self.dbd_port, enforce))
        self.c = make_cluster(start=False, conf_extra=extra + kw.pop("conf_extra", ""), **kw)
        self.backend = backend
        self.dbname = None
        if backend == "pgsql":
            self.dbname = "loomassoc_%d_%d" % (os.getpid(), int(time.time() * 1000) % 10**9)
            pg_admin("CREATE DATABASE %s" % self.dbname)
            info = dict(kv.split("=", 1) for kv in os.environ["LOOM_TEST_PGSQL"].split())
            (self.c.root / "slurmdbd.conf").write_text(
                "StorageType=accounting_storage/pgsql\nStorageHost=%s\nStoragePort=%s\n"
                "StorageUser=%s\nStorageLoc=%s\nDbdPort=%d\n"
                % (info["host"], info["port"], info["user"], self.dbname, self.dbd_port))
        self.dbd = None
        self.start_dbd()

    def start_dbd(self):
        need("loomdbd", "sacctmgr")
        log = open(self.c.logdir / "loomdbd.log", "a")
        self.dbd = subprocess.Popen([str(BIN / "loomdbd"), "-D", "-f", str(self.c.conf)],
                                    env=self.c.env, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        sock = self.c.state / "loomdbd.sock"
        self.c.wait_for(lambda: sock.exists(), "loomdbd's socket")

    def stop_dbd(self):
        if self.dbd and self.dbd.poll() is None:
            self.dbd.terminate()
            self.dbd.wait(15)
        sock = self.c.state / "loomdbd.sock"
        if sock.exists():
            sock.unlink()

    def close(self):
        self.stop_dbd()
        if self.dbname:
            pg_admin("DROP DATABASE IF EXISTS %s WITH (FORCE)" % self.dbname)

    def mgr(self, *args):
        p = self.c.run("sacctmgr", "-i", *args)
        assert p.returncode == 0, p.stderr
        return p

    def generation(self):
        """The controller's tree generation, from its log."""
        try:
            text = (self.c.logdir / "loomctld.log").read_text()
        except OSError:
            return 0
        gens = [int(l.rsplit("generation ", 1)[1].rstrip(")"))
                for l in text.splitlines() if "associations: " in l and "generation " in l]
        return max(gens) if gens else 0

    def wait_loaded(self, after=0):
        """Until the controller installed a tree newer than generation `after`."""
        self.c.wait_for(lambda: self.generation() > after, "associations loaded", timeout=40)
        return self.generation()

    def sbatch(self, *args):
        return self.c.run("sbatch", "--parsable", *args)

    def reason(self, job_id):
        return self.c.job(job_id).get("reason")


@pytest.fixture(params=BACKENDS)
def acct(request, make_cluster):
    made = []

    def make(**kw):
        a = AcctCluster(make_cluster, request.param, **kw)
        made.append(a)
        return a

    yield make
    for a in made:
        a.close()


def test_tree_loaded_and_cached(acct):
    a = acct()
    a.mgr("add", "account", "phys")
    a.mgr("add", "user", a.c.user, "account=phys")
    a.c.start()
    gen = a.wait_loaded()
    assert (a.c.state / "assoc_cache.json").exists()
    a.mgr("modify", "account", "phys", "set", "grpjobs=3")
    a.wait_loaded(gen)
