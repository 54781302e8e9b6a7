"""sacct --json in Slurm 22.05's layout (openapi dbv0.0.38), against loomdbd on
SQLite and, with LOOM_TEST_PGSQL, PostgreSQL.

dbd_expected/sacct_json_skeleton.json is the layout: member names in order,
nesting and the JSON types of every value, derived from real sacct 22.05.8
output (dbd_expected/sacct_json_real.json, captured with bench/slurmdbd_local.sh)
and checked against src/plugins/openapi/dbv0.0.38/parse.c (see
dbd_expected/sacct_json_skeleton.md). Loom's document must fit it, and its
values must say what `sacct -P` says for the same jobs, with the same
filters (-j, -X, --name, -s, -S), -o being ignored as Slurm does."""
import json
import os
import time

import pytest

from dbd_util import BACKENDS, Dbd
from test_acct_link import acct_cluster, wait_sacct  # noqa: F401  (a cluster with loomdbd)
from test_dbd_sacct import epoch, load

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "dbd_expected")
TYPES = {"int": int, "string": str, "null": type(None)}


@pytest.fixture(params=BACKENDS)
def dbd(request, tmp_path):
    d = Dbd(tmp_path, request.param)
    with open(os.path.join(EXPECTED, "sacct.json")) as f:
        d.expected = json.load(f)
    try:
        load(d, d.expected)
    except BaseException:
        d.stop_quietly()  # a failed set-up leaves no loomdbd behind
        raise
    first = d.expected[-1]["stdout"].split("\n")[1].split("|")[16]
    d.day = time.strftime("%Y-%m-%d", time.gmtime(epoch(first)))
    yield d
    d.stop()


def fits(doc, skel, path="$"):
    """Problems of doc against the skeleton: dicts have exactly its members in
    its order ("name?" may be absent), lists hold items of its one item, and
    leaves are of one of the "|"-joined types."""
    if isinstance(skel, str):
        ok = any(type(doc) is TYPES[t] for t in skel.split("|"))
        return [] if ok else ["%s: %r is not %s" % (path, doc, skel)]
    if isinstance(skel, list):
        if not isinstance(doc, list):
            return ["%s: not a list" % path]
        return [p for i, x in enumerate(doc) for p in fits(x, skel[0], "%s[%d]" % (path, i))]
    if not isinstance(doc, dict):
        return ["%s: not an object" % path]
    want = [k.rstrip("?") for k in skel if not k.endswith("?") or k.rstrip("?") in doc]
    if list(doc) != want:
        return ["%s: members %s, want %s" % (path, list(doc), want)]
    return [p for k, v in skel.items() if k.rstrip("?") in doc
            for p in fits(doc[k.rstrip("?")], v, path + "." + k.rstrip("?"))]


def skeleton():
    with open(os.path.join(EXPECTED, "sacct_json_skeleton.json")) as f:
        return json.load(f)


def sacct_json(dbd, *args):
    return parse_json(dbd.run(["sacct", "-a", "-S", dbd.day] + list(args) + ["--json"]))


def parse_json(p):
    assert p.returncode == 0 and p.stderr == "", p.stderr
    doc = json.loads(p.stdout)
    assert fits(doc, skeleton()) == []
    return doc


FIELDS = "JobIDRaw,JobName,State,ExitCode,ElapsedRaw,AllocTRES,ReqTRES,NodeList,NNodes"


def table(dbd, *args):
    return parse_table(dbd.run(["sacct", "-a", "-S", dbd.day, "-P", "-o", FIELDS] + list(args)))


def parse_table(p):
    assert p.returncode == 0, p.stderr
    lines = p.stdout.strip().split("\n")
    head = lines[0].split("|")
    return {r[0]: dict(zip(head, r)) for r in (line.split("|") for line in lines[1:])}


def slurm_exit(text):
    """What dbv0.0.38 makes of sacct's "code:signal": any normal exit is
    SUCCESS with return code 0 (WIFEXITED is tested first)."""
    code, sig = (int(x) for x in text.split(":"))
    if sig:
        return {"status": "SIGNALED", "return_code": None,
                "signal": {"signal_id": sig, "name": signame(sig)}}
    return {"status": "SUCCESS", "return_code": 0}


def signame(sig):
    """strsignal()'s text (C locale) for the signals the tests meet."""
    return {9: "Killed", 15: "Terminated", 2: "Interrupt", 6: "Aborted"}[sig]


def tres_text(items):
    """Back to sacct's AllocTRES text: by name, memory with its unit."""
    parts = []
    for t in items:
        name = t["type"] + ("/" + t["name"] if t["name"] else "")
        count = "%dM" % t["count"] if name == "mem" and t["count"] else str(t["count"])
        if name == "mem" and t["count"] and t["count"] % 1024 == 0:
            count = "%dG" % (t["count"] // 1024)
        parts.append((name, count))
    return ",".join("%s=%s" % p for p in sorted(parts))


def rows_of(doc):
    """JobIDRaw -> (job, step or None) for every job and step in the document."""
    rows = {}
    for j in doc["jobs"]:
        rows[str(j["job_id"])] = (j, None)
        for s in j["steps"]:
            rows["%d.%s" % (j["job_id"], s["step"]["id"])] = (j, s)
    return rows


def same_as_table(doc, want):
    """Every job and step of doc says what sacct -P -o FIELDS said."""
    got = rows_of(doc)
    assert sorted(got) == sorted(want)
    for raw, (job, step) in got.items():
        row, rec = want[raw], step or job
        state = rec["state"] if step else rec["state"]["current"]
        assert state == row["State"].split()[0], raw
        assert rec["exit_code"] == slurm_exit(row["ExitCode"]), raw
        assert rec["time"]["elapsed"] == int(row["ElapsedRaw"]), raw
        assert tres_text(rec["tres"]["allocated"]) == row["AllocTRES"], raw
        if step:
            assert step["step"]["name"] == row["JobName"], raw
            assert step["nodes"]["range"] == row["NodeList"], raw
            assert step["nodes"]["count"] == int(row["NNodes"]), raw
        else:
            assert job["name"] == row["JobName"], raw
            assert job["nodes"] == row["NodeList"], raw
            assert job["allocation_nodes"] == int(row["NNodes"]), raw
            assert tres_text(job["tres"]["requested"]) == row["ReqTRES"], raw


def test_skeleton_fits_real_slurm():
    """The checker and the skeleton accept what sacct 22.05.8 printed."""
    with open(os.path.join(EXPECTED, "sacct_json_real.json")) as f:
        for capture in json.load(f):
            assert fits(capture["doc"], skeleton()) == [], capture["cmd"]
    with open(os.path.join(EXPECTED, "sacct_json_empty.txt")) as f:
        assert fits(json.loads(f.read()), skeleton()) == []


def test_values_match_the_table(dbd):
    doc = sacct_json(dbd)
    assert doc["meta"] == {"plugin": {"type": "openapi/dbv0.0.38",
                                      "name": "Slurm OpenAPI DB v0.0.38"},
                           "Slurm": {"version": {"major": 22, "micro": 8, "minor": 5},
                                     "release": "22.05.8"}}
    assert doc["errors"] == [] and doc["warnings"] == []
    same_as_table(doc, table(dbd))
    # the order of slurmdbd: by raw job id; steps batch first, then by number
    assert [j["job_id"] for j in doc["jobs"]] == sorted(j["job_id"] for j in doc["jobs"])
    first = doc["jobs"][0]
    assert [s["step"]["id"] for s in first["steps"]] == ["batch", 0, 1]
    assert first["steps"][0]["task"]["distribution"] == "Unknown"
    assert first["steps"][0]["tres"]["requested"]["max"][1] == {
        "type": "mem", "name": None, "id": 2, "count": 12212 * 1024, "task": 0,
        "node": "benchnode"}


def test_filters_as_the_table(dbd):
    """-j, --name, -s, -X select the same jobs as for the table; -X and a
    step id in -j select the steps; -o changes nothing."""
    def job_ids(doc):
        return sorted(str(j["job_id"]) for j in doc["jobs"])

    for args in (["-j", "2,4"], ["--name=ok"], ["-s", "F"], ["-s", "CD", "-S", "2020-01-01"],
                 ["-u", "root"], ["-u", "nobody"]):
        doc = sacct_json(dbd, *args)
        want = sorted(k for k in table(dbd, *args) if "." not in k)
        assert job_ids(doc) == want, args
        assert (doc["errors"] != []) == (want == []), args
    doc = sacct_json(dbd, "-X")
    assert doc["jobs"] and all(j["steps"] == [] for j in doc["jobs"])
    doc = sacct_json(dbd, "-j", "1.0")
    assert [(j["job_id"], [s["step"]["id"] for s in j["steps"]]) for j in doc["jobs"]] == \
        [(1, [0])]
    assert sacct_json(dbd, "-o", "JobID,State") == sacct_json(dbd)


def test_empty_result_is_slurms_document(dbd):
    """Nothing found: Slurm's error entry, byte for byte (no final newline)."""
    p = dbd.run(["sacct", "-j", "9999", "--json"])
    with open(os.path.join(EXPECTED, "sacct_json_empty.txt")) as f:
        real = f.read()
    # plus the empty "warnings" list every Loom JSON envelope has (CLI_SPEC §11)
    assert p.stdout == real.replace('  "jobs": [', '  "warnings": [\n  ],\n  "jobs": [')
    assert p.returncode == 0


def test_layout_is_slurms_text(dbd):
    """Slurm's serializer: two-space indent, "\\/", empty lists on two lines."""
    p = dbd.run(["sacct", "-a", "-S", dbd.day, "-X", "--json"])
    assert p.stdout.startswith('{\n  "meta": {\n    "plugin": {\n      "type": "openapi\\/dbv0.0.38"')
    assert '"steps": [\n      ],' in p.stdout
    assert not p.stdout.endswith("\n")


def test_live_jobs(acct_cluster):
    """Jobs run by loomctld and loomd, recorded through loomdbd: a job with
    two srun steps (one failing), a failing job, one killed by a signal and
    one cancelled with scancel; --json says what the table says."""
    c, _ = acct_cluster

    def sbatch(*args):
        return c.run("sbatch", "--parsable", *args, check=True).stdout.strip()
    ids = [sbatch("-J", "steps", "-n2", "--wrap", "srun -n1 true; srun false; exit 0"),
           sbatch("-J", "bad", "--wrap", "exit 3"),
           sbatch("-J", "sig", "--wrap", "kill -9 $$"),
           sbatch("-J", "long", "--wrap", "sleep 300")]
    c.wait_job(int(ids[3]), "RUNNING")
    c.run("scancel", ids[3], check=True)
    wait_sacct(c, lambda r: {x[0] for x in r if x[1] not in ("PENDING", "RUNNING")}
               >= set(ids), "four finished jobs in sacct")
    base = ["sacct", "-S", "2000-01-01", "-j", ",".join(ids)]

    def both():
        return (parse_json(c.run(*base, "--json")),
                parse_table(c.run(*base, "-P", "-o", FIELDS)))
    c.wait_for(lambda: len(both()[1]) >= 10, "the jobs' steps in sacct", timeout=60)
    doc, want = both()
    same_as_table(doc, want)
    jobs = {str(j["job_id"]): j for j in doc["jobs"]}
    assert [s["step"]["id"] for s in jobs[ids[0]]["steps"]] == ["batch", 0, 1]
    assert jobs[ids[0]]["steps"][2]["tasks"]["count"] == 2
    assert jobs[ids[2]]["exit_code"]["signal"] == {"signal_id": 9, "name": "Killed"}
    assert jobs[ids[3]]["state"]["current"] == "CANCELLED"
    assert jobs[ids[3]]["kill_request_user"] == jobs[ids[3]]["user"]
    assert all(j["kill_request_user"] is None for j in doc["jobs"][:3])


def test_gres_tres_and_signal(dbd):
    """gres/gpu takes the id slurmdbd gives the first AccountingStorageTRES
    entry past Slurm's own (1001); a job killed by a signal has Slurm's
    SIGNALED form; who cancelled a job is kill_request_user."""
    job = {"job_id": 77, "submit_time": 1795269000, "start_time": 1795269001,
           "end_time": 1795269011, "state": "CANCELLED", "exit_code": 9, "name": "g",
           "partition": "debug", "account": "root", "user_name": "root", "user_id": 0,
           "group_name": "root", "group_id": 0, "nodes": "n1", "num_nodes": 1, "num_cpus": 2,
           "tres_alloc": "billing=2,cpu=2,gres/gpu=2,mem=500M,node=1",
           "tres_req": "billing=2,cpu=2,gres/gpu=2,mem=500M,node=1", "cancelled_by": 0,
           "time_limit": 30, "work_dir": "/tmp"}
    rep = dbd.call({"type": "dbd.job", "records": [{"seq": 100, "job": job}]})
    assert rep["rc"] == 0, rep
    doc = parse_json(dbd.run(["sacct", "-j", "77", "--json"]))
    j = doc["jobs"][0]
    assert j["tres"]["allocated"] == [
        {"type": "cpu", "name": None, "id": 1, "count": 2},
        {"type": "mem", "name": None, "id": 2, "count": 500},
        {"type": "node", "name": None, "id": 4, "count": 1},
        {"type": "billing", "name": None, "id": 5, "count": 2},
        {"type": "gres", "name": "gpu", "id": 1001, "count": 2}]
    assert j["exit_code"] == {"status": "SIGNALED", "return_code": None,
                              "signal": {"signal_id": 9, "name": "Killed"}}
    assert j["state"] == {"current": "CANCELLED", "reason": "None"}
    assert j["kill_request_user"] == "root"
    assert j["time"]["limit"] == 30 and j["time"]["elapsed"] == 10
    assert j["steps"] == []
