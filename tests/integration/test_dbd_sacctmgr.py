"""sacctmgr against loomdbd, byte for byte against real Slurm 22.05.8.

dbd_sacctmgr_cmds.txt is run line by line against a fresh loomdbd (SQLite,
and PostgreSQL when LOOM_TEST_PGSQL is set); every stdout, stderr and exit
status must equal what real sacctmgr printed on slurmdbd/MariaDB
(dbd_expected/sacctmgr.json, made by dbd_capture.py)."""
import json
import os
import shlex

from dbd_util import dbd  # noqa: F401 (the fixture: a fresh loomdbd)

HERE = os.path.dirname(os.path.abspath(__file__))


def test_scenario_matches_slurm(dbd):
    with open(os.path.join(HERE, "dbd_expected", "sacctmgr.json")) as f:
        expected = json.load(f)
    failures = []
    for e in expected:
        p = dbd.run(shlex.split(e["cmd"]))
        got = {"stdout": p.stdout, "stderr": p.stderr, "rc": p.returncode}
        want = {"stdout": e["stdout"], "stderr": e["stderr"], "rc": e["rc"]}
        if got != want:
            failures.append("%s\n--- want %r\n--- got  %r" % (e["cmd"], want, got))
    assert not failures, "\n\n".join(failures)


def test_seed_004_qos_commands(dbd):
    """The seed document's QoS lines, unchanged (accounts made first)."""
    for acct in ("ai-research", "students"):
        assert dbd.run(["sacctmgr", "-i", "add", "account", acct]).returncode == 0
    lines = [
        "sacctmgr add qos name=high priority=1000 MaxWall=7-00:00:00 MaxJobsPerUser=10",
        "sacctmgr add qos name=normal priority=500 MaxWall=3-00:00:00 MaxJobsPerUser=5",
        "sacctmgr add qos name=low priority=100 MaxWall=1-00:00:00 MaxJobsPerUser=2",
        "sacctmgr modify account ai-research set qos=high",
        "sacctmgr modify account students set qos=normal",
    ]
    for line in lines:
        argv = shlex.split(line)
        dbd.run(argv[:1] + ["-i"] + argv[1:])
    p = dbd.run(["sacctmgr", "-n", "-P", "show", "assoc", "format=account,qos"])
    assert "ai-research|high\n" in p.stdout and "students|normal\n" in p.stdout
    p = dbd.run(["sacctmgr", "--json", "show", "qos"])
    names = [q["name"] for q in json.loads(p.stdout)["qos"]]
    assert names == ["normal", "high", "low"]


def test_commit_question(dbd):
    """Without -i: the summary, the question, and nothing stored on 'n' or EOF."""
    r, w = os.pipe()
    os.write(w, b"n\n")
    os.close(w)
    p = dbd.run(["sacctmgr", "add", "qos", "q1"], stdin=r)
    os.close(r)
    assert "Would you like to commit changes? (You have 30 seconds to decide)" in p.stdout
    assert " Changes Discarded" in p.stdout
    p = dbd.run(["sacctmgr", "add", "qos", "q1"])
    assert " Changes Discarded" in p.stdout
    r, w = os.pipe()
    os.write(w, b"y\n")
    os.close(w)
    dbd.run(["sacctmgr", "add", "qos", "q1"], stdin=r)
    os.close(r)
    p = dbd.run(["sacctmgr", "-n", "-P", "show", "qos", "format=name"])
    assert p.stdout == "normal\nq1\n"


def test_readonly_and_oneliner(dbd):
    """-r/--readonly refuses every change with sacctmgr 22.05.8's words and
    still shows; -o/--oneliner is taken (Loom prints a record a line anyway)."""
    for argv in (["add", "account", "ro1"], ["modify", "qos", "normal", "set", "priority=5"],
                 ["delete", "qos", "normal"]):
        p = dbd.run(["sacctmgr", "-r", "-i"] + argv)
        assert (p.returncode, p.stderr) == (1, "Can't run this command in readonly mode.\n"), argv
    p = dbd.run(["sacctmgr", "--readonly", "-o", "-n", "-P", "show", "qos", "format=name,priority"])
    assert (p.returncode, p.stdout) == (0, "normal|0\n"), p.stderr


def test_show_tres_and_empty_entities(dbd):
    """show tres: slurmdbd's eight built-in TRES and their ids, then the
    AccountingStorageTRES ones from 1001; wckey, reservation, resource and
    federation (Loom keeps none) print their header, as 22.05.8 side by side."""
    p = dbd.run(["sacctmgr", "-n", "-P", "show", "tres"])
    rows = p.stdout.splitlines()
    assert rows[:8] == ["cpu||1", "mem||2", "energy||3", "node||4", "billing||5", "fs|disk|6",
                        "vmem||7", "pages||8"], p.stdout
    assert all(int(r.split("|")[2]) >= 1001 for r in rows[8:]), p.stdout
    p = dbd.run(["sacctmgr", "show", "tres", "format=ID,Name"])
    assert p.stdout.splitlines()[:3] == ["    ID            Name ", "------ --------------- ",
                                         "     1                 "], p.stdout
    assert dbd.run(["sacctmgr", "show", "wckey"]).stdout == (
        "     WCKey    Cluster       User \n---------- ---------- ---------- \n")
    assert dbd.run(["sacctmgr", "-P", "show", "resource"]).stdout == (
        "Name|Server|Type|Count|% Allocated|ServerType\n")


def test_unsigned_tcp_and_ping(dbd):
    assert dbd.call({"type": "ping"})["rc"] == 0
    assert dbd.call({"type": "ping"}, sign=False) is None  # dropped: TCP needs the key
    rep = dbd.call({"type": "dbd.qos.list", "where": {}})
    assert [q["name"] for q in rep["qos"]] == ["normal"]
