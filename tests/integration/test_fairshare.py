"""Fair-share (issue 7): usage charged by loomctld, the fair-tree factor in
sprio and the job priority, sshare in Slurm 22.05's layout, and usage that
survives a restart of loomctld.

A real loomdbd (SQLite; PostgreSQL too when LOOM_TEST_PGSQL is set) holds two accounts with shares 1:1 (the test's user
in both); a job of account `busy` runs for a while, then a pending job of
`idle` must get the higher fair-share factor and priority. PriorityCalcPeriod
is 2 seconds and PriorityDecayHalfLife one hour so that the test is fast."""
import re
import subprocess
import time

import pytest

from conftest import BIN, need
from dbd_util import BACKENDS, pg_admin, pg_slurmdbd_conf
from ports import free_port

CONF = ("PriorityType=priority/multifactor\nPriorityWeightFairshare=10000\n"
        "PriorityWeightAge=0\nPriorityWeightJobSize=0\nPriorityCalcPeriod=0:02\n"
        "PriorityDecayHalfLife=1:00:00\n")

# sshare's header lines on slurmctld 22.05.8 (default and -l).
HEAD = ("Account                    User  RawShares  NormShares    RawUsage  EffectvUsage"
        "  FairShare \n"
        "-------------------- ---------- ---------- ----------- ----------- -------------"
        " ---------- \n")
HEAD_L = ("Account                    User  RawShares  NormShares    RawUsage   NormUsage"
          "  EffectvUsage  FairShare    LevelFS                    GrpTRESMins"
          "                    TRESRunMins \n")


@pytest.fixture(params=BACKENDS)
def fs(request, make_cluster):
    yield from fs_cluster(make_cluster, request.param, CONF)


@pytest.fixture
def fs_basic(make_cluster):
    """The same cluster under priority/basic (the default PriorityType)."""
    yield from fs_cluster(make_cluster, "sqlite", "")


def fs_cluster(make_cluster, backend, conf):
    need("loomdbd", "sacctmgr", "sshare", "sprio")
    port = free_port()
    extra = ("AccountingStorageType=accounting_storage/slurmdbd\nAccountingStoragePort=%d\n"
             "AccountingStorageEnforce=associations\n" % port) + conf
    c = make_cluster(start=False, nodes=1, cpus=2, gpus=0, conf_extra=extra)
    dbname = None
    if backend == "pgsql":
        dbname = pg_slurmdbd_conf(c.root, "loomfs", port)
    log = open(c.logdir / "loomdbd.log", "a")
    dbd = subprocess.Popen([str(BIN / "loomdbd"), "-D", "-f", str(c.conf)], env=c.env,
                           stdout=log, stderr=subprocess.STDOUT)
    log.close()
    c.wait_for(lambda: (c.state / "loomdbd.sock").exists(), "loomdbd's socket")
    for args in (["add", "account", "busy,idle"],
                 ["add", "user", c.user, "account=busy,idle"]):
        p = c.run("sacctmgr", "-i", *args)
        assert p.returncode == 0, p.stderr
    yield c
    c.stop()
    dbd.terminate()
    dbd.wait(15)
    if dbname:
        pg_admin("DROP DATABASE IF EXISTS %s WITH (FORCE)" % dbname)


def shares(c, *args):
    p = c.run("sshare", "-P", "-a", *args)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    head = lines[0].split("|")
    return {(r[0].strip(), r[1]): dict(zip(head, r))
            for r in (l.split("|") for l in lines[1:])}


def loaded(c):
    """The association tree reached the controller (sshare lists both accounts)."""
    rows = shares(c)
    return ("busy", "") in rows and ("idle", c.user) in rows


def usage(c, account):
    return int(shares(c).get((account, ""), {}).get("RawUsage") or 0)


def sbatch(c, *args):
    p = c.run("sbatch", "--parsable", "-o", "/dev/null", *args)
    assert p.returncode == 0, p.stderr
    return int(p.stdout.strip().split(";")[0])


def sprio_fs(c):
    """{job id: (priority, weighted FAIRSHARE)} from sprio -l."""
    p = c.run("sprio", "-l", "-h", "-o", "%i %Y %F")
    assert p.returncode == 0, p.stderr
    return {int(a): (int(b), int(f)) for a, b, f in (l.split() for l in p.stdout.splitlines())}


def test_fairshare_usage_priority_sshare_restart(fs):
    c = fs
    c.start()
    c.wait_for(lambda: loaded(c), "associations in sshare", timeout=40)
    # No usage yet: every user association ranks first (FairShare 1.0, LevelFS inf).
    rows = shares(c, "-l")
    assert rows[("busy", c.user)]["FairShare"] == "1.000000"
    assert rows[("busy", c.user)]["LevelFS"] == "inf"
    # root's children: the root user's own association (as Slurm creates it), busy, idle.
    assert rows[("busy", "")]["NormShares"] == "0.333333"

    # A job that ends between two calculations is charged to its end: 2 CPUs
    # for its run time (the decay over a few seconds of a one-hour half-life
    # is below 0.2%).
    short = sbatch(c, "-A", "busy", "-n", "2", "--wrap", "sleep 3")
    rec = c.wait_job(short, "COMPLETED")
    ran = rec["end_time"] - rec["start_time"]
    c.wait_for(lambda: usage(c, "busy") >= 2 * ran - 1, "the short job's usage", timeout=40)
    assert usage(c, "busy") <= 2 * ran, (usage(c, "busy"), ran)
    tres = shares(c, "-o", "Account,User,GrpTRESRaw")[("busy", c.user)]["GrpTRESRaw"]
    assert tres.startswith("cpu=0,mem=") and ",node=0,billing=0," in tres, tres

    busy = sbatch(c, "-A", "busy", "-n", "2", "-t", "10", "--wrap", "sleep 30")
    c.wait_job(busy, "RUNNING")
    used = usage(c, "busy")
    c.wait_for(lambda: usage(c, "busy") >= used + 4, "busy's usage to grow", timeout=40)
    # Both wait behind the running job (the node is full); idle's ranks higher.
    b2 = sbatch(c, "-A", "busy", "-n", "2", "--wrap", "true")
    i2 = sbatch(c, "-A", "idle", "-n", "2", "--wrap", "true")

    def ordered():
        p = sprio_fs(c)
        return i2 in p and b2 in p and p[i2][1] > p[b2][1] and p[i2][0] > p[b2][0]

    c.wait_for(ordered, "idle's job to outrank busy's in sprio", timeout=40)
    p = sprio_fs(c)
    # Three user associations: root's and idle's tie for rank 3 (1.0), busy's is 1/3.
    assert p[i2][1] == 10000 and p[b2][1] == 3333, p

    rows = shares(c, "-l")
    assert rows[("idle", c.user)]["FairShare"] == "1.000000"
    assert rows[("busy", c.user)]["FairShare"] == "0.333333"
    assert rows[("busy", "")]["EffectvUsage"] == "1.000000"
    assert rows[("idle", "")]["LevelFS"] == "inf"
    assert rows[("root", "")]["RawShares"] == ""
    # TRESRunMins: what the running job may still use (2 CPUs, about 10 minutes).
    run = dict(kv.split("=") for kv in rows[("busy", c.user)]["TRESRunMins"].split(","))
    assert 16 <= int(run["cpu"]) <= 20 and int(run["node"]) in (8, 9, 10), run

    # The layout: Slurm's header, the tree indented one space per level.
    out = c.run("sshare", "-a").stdout
    assert out.startswith(HEAD), out
    lines = out.splitlines()[2:]
    assert re.match(r"^root {16}( {11}){2} +0\.000000 +\d+ +1\.000000 {12}$", lines[0]), lines
    i = lines.index(next(l for l in lines if l.startswith(" busy ")))
    assert re.match(r"^ busy {15} {11} +1 +0\.333333 +\d+ +1\.000000 {12}$", lines[i]), lines
    user_row = "  busy%s %10s %10d %11s %11s %13s %10s " % (
        " " * 14, c.user, 1, "1.000000", rows[("busy", c.user)]["RawUsage"], "1.000000",
        "0.333333")
    assert lines[i + 1] == user_row, lines
    assert c.run("sshare", "-l", "-a").stdout.startswith(HEAD_L)
    # -U: users only, not indented; -u picks users; -A accounts.
    u = c.run("sshare", "-U", "-u", c.user, "-n", "-o", "Account,User%12").stdout.splitlines()
    want = ["%-20s %12s " % (a, c.user) for a in ("root", "busy", "idle")]
    assert u == (want if c.user == "root" else want[1:]), u
    a = c.run("sshare", "-A", "idle", "-n", "-P", "-o", "account,user,fairshare").stdout
    assert a.splitlines() == ["idle||", " idle|%s|1.000000" % c.user], a
    m = c.run("sshare", "-M", "loomtest", "-v", "-n", "-P", "-o", "account", "-A", "idle")
    assert m.stdout == "CLUSTER: loomtest\nidle\n idle\n", m.stdout
    assert m.stderr == "Users requested:\n\t: %s\nAccounts requested:\n\t: idle\n" % c.user
    m = c.run("sshare", "-M", "other")
    assert m.returncode == 1 and "No cluster 'other' known by database." in m.stderr, m.stderr
    # A double too wide for its column prints as %e; negative widths left-justify.
    w = c.run("sshare", "-U", "-A", "idle", "-n", "-o", "FairShare%4,RawUsage%3,NormShares%-12")
    assert w.stdout == "1.000000e+00   0 1.000000     \n", w.stdout
    p = c.run("sshare", "-U", "-A", "idle", "-p", "-o", "user,levelfs").stdout
    assert p == "User|LevelFS|\n%s|inf|\n" % c.user, p
    bad = c.run("sshare", "-o", "nosuch")
    assert bad.returncode == 1 and 'Invalid field requested: "nosuch"' in bad.stderr

    # A restart keeps the usage (saved each PriorityCalcPeriod).
    before = usage(c, "busy")
    c.kill_ctld()
    c.start_ctld()
    c.wait_for(lambda: loaded(c), "associations after the restart", timeout=40)
    after = usage(c, "busy")
    assert after >= before * 0.9 and after > 0, (before, after)
    c.wait_for(ordered, "idle's job still first after the restart", timeout=40)


def test_saved_usage_and_reset_now(fs):
    """The state file is read at start; PriorityUsageResetPeriod=NOW clears it."""
    import json
    c = fs
    key = "busy\x1f%s\x1f" % c.user
    (c.state / "fairshare_usage.json").write_text(json.dumps(
        {"last": int(time.time()), "usage": {key: [3600.0, 3600.0, 0, 1800.0, 3600.0, 0]}}))
    c.start()
    c.wait_for(lambda: loaded(c), "associations in sshare", timeout=40)
    rows = shares(c, "-o", "Account,User,RawUsage,GrpTRESRaw,FairShare")
    assert int(rows[("busy", c.user)]["RawUsage"]) in (3599, 3600), rows
    assert rows[("busy", c.user)]["GrpTRESRaw"].startswith("cpu=60,mem=0,energy=0,node=30,"), rows
    assert rows[("idle", c.user)]["FairShare"] == "1.000000"
    c.kill_ctld()
    with open(c.conf, "a") as f:
        f.write("PriorityUsageResetPeriod=NOW\n")
    c.start_ctld()
    c.wait_for(lambda: loaded(c), "associations after the restart", timeout=40)
    assert usage(c, "busy") == 0


def test_sshare_priority_basic(fs_basic):
    """Under priority/basic sshare 22.05 still lists the associations, with
    RawShares only: NormShares and NormUsage blank, usage, EffectvUsage,
    FairShare and LevelFS 0 (the root's LevelFS too), TRES usage all 0 even
    for a running job (checked side by side with slurmctld+slurmdbd 22.05)."""
    c = fs_basic
    c.start()
    c.wait_for(lambda: loaded(c), "associations in sshare", timeout=40)
    job = sbatch(c, "-A", "busy", "-t", "10", "--wrap", "sleep 30")
    c.wait_job(job, "RUNNING")
    p = c.run("sshare", "-a")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(HEAD), p.stdout
    assert "root                                                             0      0.000000" \
           "            \n" in p.stdout, p.stdout
    user = ("%-20s %10s          1                       0      0.000000   0.000000 \n"
            % ("  busy", c.user[:10]))
    assert user in p.stdout, p.stdout
    rows = shares(c, "-l")
    assert rows[("root", "")]["LevelFS"] == "0.000000"
    assert rows[("root", "")]["RawShares"] == ""
    for key in [("busy", ""), ("busy", c.user), ("idle", c.user)]:
        r = rows[key]
        assert r["RawShares"] == "1", (key, r)
        assert (r["NormShares"], r["NormUsage"], r["RawUsage"]) == ("", "", "0"), (key, r)
        assert (r["EffectvUsage"], r["LevelFS"]) == ("0.000000", "0.000000"), (key, r)
        assert r["FairShare"] == ("0.000000" if key[1] else ""), (key, r)
        assert re.fullmatch(r"cpu=0,mem=0,energy=0,node=0,billing=0(,[^=]+=0)*",
                            r["TRESRunMins"]), r
    c.run("scancel", str(job))
