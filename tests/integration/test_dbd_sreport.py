"""sreport and seff against loomdbd, byte for byte against real Slurm 22.05.8.

dbd_expected/sreport.json holds real sreport outputs (dbd_sreport_capture.py)
over the records of sreport_data.py, which were written into slurmdbd's
MariaDB tables and rolled up by slurmdbd. The test stores the same records in
loomdbd (capacity records and jobs through dbd.job, the accounts and users
through sacctmgr, in the same order so that association ids agree), runs every
captured command and compares stdout, stderr and exit status. SQLite, and
PostgreSQL when LOOM_TEST_PGSQL is set."""
import json
import os
import shlex
import time

import pytest

from dbd_util import Dbd
import sreport_data as data

HERE = os.path.dirname(os.path.abspath(__file__))
BACKENDS = ["sqlite"] + (["pgsql"] if os.environ.get("LOOM_TEST_PGSQL") else [])
# Captured commands whose output Loom does not reproduce on purpose.
SKIP = {
    "-T ALL": "slurmdbd's rollup counts the node TRES of a cluster as one node; Loom as configured",
    "-V": "Debian's build names itself slurm-wlm",
    "start=bogus": "the default window depends on today",
}


@pytest.fixture(params=BACKENDS)
def dbd(request, tmp_path):
    d = Dbd(tmp_path, request.param)
    yield d
    d.stop()


def load(dbd):
    for cmd in (["add", "account", "phys,chem"], ["add", "user", "root", "account=phys"],
                ["add", "user", "daemon", "account=chem"],
                ["add", "user", "bin", "account=phys,chem"]):
        p = dbd.run(["sacctmgr", "-i"] + cmd)
        assert p.returncode == 0, p.stderr
    recs = [{"cluster_tres": {"time": t, "tres": tres, "down_tres": down}}
            for t, tres, down in data.CAPACITY_RECORDS]
    for (jid, user, acct, cpus, mem, nodes, gpus, sub, elig, start, end) in data.JOBS:
        uid, gid = data.USERS[user]
        alloc = data.tres_alloc(cpus, mem, nodes, gpus)
        recs.append({"job": {
            "job_id": jid, "name": "job%d" % jid, "user_name": user, "user_id": uid,
            "group_id": gid, "account": acct, "partition": "debug",
            "state": "COMPLETED", "exit_code": 0, "submit_time": sub, "eligible_time": elig,
            "start_time": start, "end_time": end, "num_cpus": cpus, "num_nodes": nodes,
            "nodes": "n1", "tres_alloc": alloc, "tres_req": alloc, "mem_per_node": mem}})
    for i, r in enumerate(recs):
        r["seq"] = i + 1
    rep = dbd.call({"type": "dbd.job", "records": recs})
    assert rep["rc"] == 0 and rep["acked"] == len(recs), rep


def expected():
    with open(os.path.join(HERE, "dbd_expected", "sreport.json")) as f:
        return json.load(f)


def test_sreport_matches_slurm(dbd):
    load(dbd)
    failures = []
    for e in expected():
        if any(k in e["cmd"] for k in SKIP):
            continue
        p = dbd.run(shlex.split(e["cmd"]))
        got = {"stdout": p.stdout, "stderr": p.stderr, "rc": p.returncode}
        want = {"stdout": e["stdout"], "stderr": e["stderr"], "rc": e["rc"]}
        if got != want:
            failures.append("%s\n--- want %r\n--- got  %r" % (e["cmd"], want, got))
    assert not failures, "%d of %d differ:\n\n%s" % (len(failures), len(expected()),
                                                      "\n\n".join(failures))


def test_sreport_default_window_and_running_jobs(dbd):
    """No start=/end=: yesterday 00:00 to today 00:00 (the capacity records
    hold until the next one); a job that has not ended counts up to now."""
    load(dbd)
    p = dbd.run(["sreport", "-n", "-P", "cluster", "utilization"])
    assert p.returncode == 0 and p.stdout == "bench|0|0|0|11520|0|11520\n", p
    now = int(time.time())
    rep = dbd.call({"type": "dbd.job", "records": [{"seq": 100, "job": {
        "job_id": 900, "user_name": "root", "account": "phys", "submit_time": now - 7200,
        "start_time": now - 3600, "num_cpus": 2, "tres_alloc": "cpu=2"}}]})
    assert rep["rc"] == 0
    rep = dbd.call({"type": "dbd.report.users", "start": now - 86400, "end": now + 86400,
                    "users": ["root"]})
    cpu = [u["tres"]["cpu"] for u in rep["usage"] if u["account"] == "phys"]
    assert cpu and 2 * 3600 <= cpu[0] <= 2 * 3700, rep
    rep = dbd.call({"type": "dbd.report.cluster", "start": 10, "end": 5})
    assert rep["rc"] != 0 and "start < end" in rep["msg"]
