"""The controller's associations and their enforcement (issue 7).

A real loomdbd (SQLite; PostgreSQL too when LOOM_TEST_PGSQL is set) beside
loomctld and two loomd: sacctmgr fills the accounting tree, loomctld loads
it (and its cache), and AccountingStorageEnforce turns it into Slurm 22.05's
rejections at submit and pending reasons in squeue."""
import subprocess

import pytest

from conftest import BIN, Rpc, need
from dbd_util import BACKENDS, pg_admin, pg_slurmdbd_conf
from ports import free_port

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
            self.dbname = pg_slurmdbd_conf(self.c.root, "loomassoc", self.dbd_port)
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

    def add_user(self, account, *opts):
        """The test's user in account, made its default (the user may be root)."""
        self.mgr("add", "user", self.c.user, "account=" + account, *opts)
        self.mgr("modify", "user", self.c.user, "set", "defaultaccount=" + account)

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
    a.add_user("phys")
    a.c.start()
    gen = a.wait_loaded()
    assert (a.c.state / "assoc_cache.json").exists()
    # loomctld polls with if_gen: loomdbd answers "unchanged" until a change.
    rpc = Rpc(a.c.state / "loomdbd.sock")
    try:
        first = rpc.call("dbd.assoc.list")
        assert first["rc"] == 0 and first["assocs"] and first["gen"]
        again = rpc.call("dbd.assoc.list", if_gen=first["gen"])
        assert again.get("unchanged") is True and "assocs" not in again
        a.mgr("modify", "account", "phys", "set", "grpjobs=3")
        a.wait_loaded(gen)
        later = rpc.call("dbd.assoc.list", if_gen=first["gen"])
        assert "unchanged" not in later and later["gen"] != first["gen"]
    finally:
        rpc.close()


def test_submit_rejections_and_defaults(acct):
    a = acct()
    a.mgr("add", "account", "phys")
    a.mgr("add", "qos", "fast", "priority=100")
    a.add_user("phys")
    a.c.start()
    a.wait_loaded()
    p = a.sbatch("-A", "nosuch", "--wrap=true")
    assert p.returncode == 1
    assert p.stderr == ("sbatch: error: Batch job submission failed: Invalid account or "
                        "account/partition combination specified\n")
    p = a.sbatch("--qos=fast", "--wrap=true")
    assert p.returncode == 1
    assert p.stderr == "sbatch: error: Batch job submission failed: Invalid qos specification\n"
    p = a.sbatch("--qos=nosuch", "--wrap=true")
    assert p.returncode == 1 and "Invalid qos specification" in p.stderr
    p = a.sbatch("--wrap=sleep 30")
    assert p.returncode == 0, p.stderr
    job = a.c.job(int(p.stdout.strip()))
    assert job["account"] == "phys" and job["qos"] == "normal"
    out = a.c.run("squeue", "-h", "-o", "%a %q", "-j", p.stdout.strip()).stdout
    assert out == "phys normal\n"
    out = a.c.run("scontrol", "show", "job", p.stdout.strip()).stdout
    assert "Account=phys QOS=normal" in out
    # The QOS becomes usable once the association lists it.
    gen = a.generation()
    a.mgr("modify", "user", a.c.user, "set", "qos+=fast")
    a.wait_loaded(gen)
    p = a.sbatch("--qos=fast", "--wrap=true")
    assert p.returncode == 0, p.stderr
    assert a.c.job(int(p.stdout.strip()))["qos"] == "fast"


def test_submit_limit_rejected(acct):
    a = acct()
    a.mgr("add", "account", "phys")
    a.add_user("phys", "maxsubmitjobs=2")
    a.c.start()
    a.wait_loaded()
    # An array counts its tasks (3 > 2), as on Slurm.
    p = a.sbatch("--array=0-2", "--wrap=sleep 30")
    assert p.returncode == 1 and "Job violates accounting/QOS policy" in p.stderr
    assert a.sbatch("--wrap=sleep 30").returncode == 0
    assert a.sbatch("--wrap=sleep 30").returncode == 0
    p = a.sbatch("--wrap=sleep 30")
    assert p.returncode == 1
    # As sbatch prints it against slurmctld 22.05.8: the limit's reason, then the error.
    assert p.stderr == ("sbatch: error: AssocMaxSubmitJobLimit\n"
                        "sbatch: error: Batch job submission failed: Job violates accounting/QOS "
                        "policy (job submit limit, user's size and/or time limits)\n")
    p = a.sbatch("--array=0-1", "--wrap=true")
    assert p.returncode == 1 and "Job violates accounting/QOS policy" in p.stderr


def test_pending_reasons_and_release(acct):
    a = acct()
    a.mgr("add", "account", "phys", "grptres=gres/gpu=2")
    a.add_user("phys", "maxjobs=2")
    a.c.start()
    a.wait_loaded()
    ids = [int(a.sbatch("-n1", "--wrap=sleep 300").stdout) for _ in range(3)]
    a.c.wait_job(ids[0], "RUNNING")
    a.c.wait_job(ids[1], "RUNNING")
    a.c.wait_for(lambda: a.reason(ids[2]) == "AssocMaxJobsLimit", "AssocMaxJobsLimit")
    out = a.c.run("squeue", "-h", "-o", "%i %r", "-j", str(ids[2])).stdout
    assert out == "%d AssocMaxJobsLimit\n" % ids[2]
    a.c.run("scancel", str(ids[0]), check=True)
    a.c.wait_job(ids[2], "RUNNING")
    for j in ids[1:]:
        a.c.run("scancel", str(j), check=True)
    # GPUs over the account's GrpTRES: the second job waits for AssocGrpGRES.
    g1 = int(a.sbatch("--gres=gpu:2", "--wrap=sleep 300").stdout)
    g2 = int(a.sbatch("--gres=gpu:1", "--wrap=sleep 300").stdout)
    a.c.wait_job(g1, "RUNNING")
    a.c.wait_for(lambda: a.reason(g2) == "AssocGrpGRES", "AssocGrpGRES")
    a.c.run("scancel", str(g1), check=True)
    a.c.wait_job(g2, "RUNNING")


def test_seed_004_qos(acct):
    """Seed 004's QoS commands, unchanged. As on Slurm, "add qos name=normal"
    finds the QOS that exists and changes nothing; high and low bind jobs."""
    a = acct()
    for acc in ("ai-research", "students"):
        a.mgr("add", "account", acc)
    a.add_user("ai-research")
    lines = [
        "add qos name=high priority=1000 MaxWall=7-00:00:00 MaxJobsPerUser=10",
        "add qos name=normal priority=500 MaxWall=3-00:00:00 MaxJobsPerUser=5",
        "add qos name=low priority=100 MaxWall=1-00:00:00 MaxJobsPerUser=2",
        "modify account ai-research set qos=high",
        "modify account students set qos=normal",
    ]
    for line in lines:
        a.c.run("sacctmgr", "-i", *line.split())
    a.c.start()
    a.wait_loaded()
    p = a.sbatch("--qos=normal", "--wrap=true")
    assert p.returncode == 1 and "Invalid qos specification" in p.stderr
    p = a.sbatch("--wrap=sleep 300")
    job = a.c.job(int(p.stdout))
    assert job["qos"] == "high" and job["time_limit"] == 7 * 24 * 60
    p = a.sbatch("-t", "8-00:00:00", "--wrap=true")
    assert p.returncode == 0
    a.c.wait_for(lambda: a.reason(int(p.stdout)) == "QOSMaxWallDurationPerJobLimit",
                 "QOSMaxWallDurationPerJobLimit")
    gen = a.generation()
    a.mgr("modify", "user", a.c.user, "set", "qos+=low")
    a.wait_loaded(gen)
    ids = [int(a.sbatch("--qos=low", "--wrap=sleep 300").stdout) for _ in range(3)]
    a.c.wait_for(lambda: a.reason(ids[2]) == "QOSMaxJobsPerUserLimit", "QOSMaxJobsPerUserLimit")
    assert [a.c.job(j)["state"][0] for j in ids[:2]] == ["RUNNING", "RUNNING"]
    assert a.c.job(ids[0])["time_limit"] == 24 * 60


def test_enforcement_survives_dbd_down(acct):
    a = acct()
    a.mgr("add", "account", "phys")
    a.add_user("phys", "maxjobs=1")
    a.c.start()
    a.wait_loaded()
    a.stop_dbd()
    a.c.kill_ctld()
    a.c.start_ctld()
    p = a.sbatch("-A", "nosuch", "--wrap=true")
    assert "Invalid account" in p.stderr
    ids = [int(a.sbatch("--wrap=sleep 300").stdout) for _ in range(2)]
    a.c.wait_job(ids[0], "RUNNING")
    a.c.wait_for(lambda: a.reason(ids[1]) == "AssocMaxJobsLimit", "AssocMaxJobsLimit")
    assert a.c.job(ids[1])["account"] == "phys"


def test_update_account_qos(acct):
    a = acct()
    a.mgr("add", "account", "phys")
    a.mgr("add", "account", "chem")
    a.mgr("add", "qos", "fast")
    a.add_user("phys")
    a.c.start()
    a.wait_loaded()
    j = a.sbatch("--hold", "--wrap=true").stdout.strip()
    p = a.c.run("scontrol", "update", "jobid=" + j, "Account=nosuch")
    assert p.returncode == 1 and "Invalid account or account/partition combination" in p.stderr
    p = a.c.run("scontrol", "update", "jobid=" + j, "QOS=nosuch")
    assert p.returncode == 1 and "Invalid qos specification" in p.stderr
    assert a.c.job(int(j))["account"] == "phys" and a.c.job(int(j))["qos"] == "normal"
    # An administrator (the test may run as root) may pick any QOS, as on slurmctld.
    if a.c.user == "root":
        p = a.c.run("scontrol", "update", "jobid=" + j, "QOS=fast")
        assert p.returncode == 0, p.stderr
        assert a.c.job(int(j))["qos"] == "fast"
    gen = a.generation()
    a.mgr("add", "user", a.c.user, "account=chem")
    a.wait_loaded(gen)
    p = a.c.run("scontrol", "update", "jobid=" + j, "Account=chem")
    assert p.returncode == 0, p.stderr
    assert a.c.job(int(j))["account"] == "chem"


def test_update_unknown_account_qos_unenforced(acct):
    """Without AccountingStorageEnforce, slurmctld 22.05.8 answers 0 to an
    unknown QOS or an account without an association and keeps the job's
    (side by side); known ones are taken."""
    a = acct(enforce="none")
    a.mgr("add", "account", "phys")
    a.mgr("add", "account", "chem")
    a.mgr("add", "qos", "fast")
    a.add_user("phys")
    a.add_user("chem")
    a.c.start()
    a.wait_loaded()
    j = int(a.sbatch("-A", "phys", "--hold", "--wrap=true").stdout)
    for kv in ("Account=nosuch", "QOS=nosuch"):
        p = a.c.run("scontrol", "update", "jobid=%d" % j, kv)
        assert (p.returncode, p.stderr) == (0, ""), (kv, p.stderr)
    assert (a.c.job(j)["account"], a.c.job(j)["qos"]) == ("phys", "normal")
    a.c.run("scontrol", "update", "jobid=%d" % j, "Account=chem", "QOS=fast", check=True)
    assert (a.c.job(j)["account"], a.c.job(j)["qos"]) == ("chem", "fast")


def test_removed_qos_holds_job(acct):
    """A pending job whose QOS goes away waits with InvalidQOS."""
    a = acct()
    a.mgr("add", "account", "phys")
    a.mgr("add", "qos", "fast")
    a.add_user("phys", "qos=normal,fast")
    a.c.start()
    gen = a.wait_loaded()
    j = int(a.sbatch("--qos=fast", "--hold", "--wrap=true").stdout)
    a.mgr("delete", "qos", "fast")
    a.wait_loaded(gen)
    a.c.run("scontrol", "release", str(j), check=True)
    a.c.wait_for(lambda: a.reason(j) == "InvalidQOS", "InvalidQOS")
    assert a.c.job(j)["state"][0] == "PENDING"


def test_deny_on_limit(acct):
    """Over a per-job limit: pending by default, rejected under DenyOnLimit
    (both as slurmctld 22.05.8 does with the same QOS)."""
    a = acct()
    a.mgr("add", "account", "phys")
    a.mgr("add", "qos", "fast", "maxwall=30")
    a.add_user("phys", "qos=fast")
    a.c.start()
    gen = a.wait_loaded()
    j = int(a.sbatch("-t", "60", "--wrap=true").stdout)
    assert a.c.job(j)["qos"] == "fast"  # the association's only QOS
    a.c.wait_for(lambda: a.reason(j) == "QOSMaxWallDurationPerJobLimit", "the QOS MaxWall")
    k = int(a.sbatch("--wrap=sleep 300").stdout)
    assert a.c.job(k)["time_limit"] == 30
    a.mgr("modify", "qos", "fast", "set", "flags=DenyOnLimit")
    a.wait_loaded(gen)
    p = a.sbatch("-t", "60", "--wrap=true")
    assert p.returncode == 1
    assert p.stderr == ("sbatch: error: QOSMaxWallDurationPerJobLimit\n"
                        "sbatch: error: Batch job submission failed: Job violates accounting/QOS "
                        "policy (job submit limit, user's size and/or time limits)\n")


def test_grp_submit_limit(acct):
    """GrpSubmitJobs of a parent account counts its whole subtree."""
    a = acct()
    a.mgr("add", "account", "phys", "grpsubmitjobs=2")
    a.mgr("add", "account", "theory", "parent=phys")
    a.add_user("theory")
    a.mgr("add", "user", a.c.user, "account=phys")
    a.c.start()
    a.wait_loaded()
    assert a.sbatch("--hold", "--wrap=true").returncode == 0
    assert a.sbatch("-A", "phys", "--hold", "--wrap=true").returncode == 0
    p = a.sbatch("--hold", "--wrap=true")
    assert p.returncode == 1
    assert p.stderr.startswith("sbatch: error: AssocGrpSubmitJobsLimit\n")
