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
import subprocess
import time

import pytest

from dbd_util import BIN, dbd  # noqa: F401 (the fixture: a fresh loomdbd)
import sreport_data as data

HERE = os.path.dirname(os.path.abspath(__file__))
# Captured commands whose output Loom does not reproduce on purpose.
SKIP = {
    "-T ALL": "slurmdbd's rollup counts the node TRES of a cluster as one node; Loom as configured",
    "-V": "Debian's build names itself slurm-wlm",
    "start=bogus": "the default window depends on today",
}


def load(dbd):
    for cmd in (["add", "account", "phys,chem"], ["add", "user", "root", "account=phys"],
                ["add", "user", "daemon", "account=chem"],
                ["add", "user", "bin", "account=phys,chem"],
                ["add", "account", "sub", "parent=phys"], ["add", "user", "daemon", "account=sub"]):
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
            "state": data.STATES.get(jid, ("COMPLETED",))[0], "exit_code": 0, "submit_time": sub, "eligible_time": elig,
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
    if time.time() < data.DAY + 3 * 86400:  # sreport ends windows at now, as Slurm does
        pytest.skip("the captured window lies in this machine's future")
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
    yesterday = (int(time.time()) // 86400 - 1) * 86400
    assert p.returncode == 0, p
    if yesterday < data.CAPACITY_RECORDS[0][0]:
        assert p.stdout == "", p  # a machine whose clock is before the data
    else:  # no job ran then; job 108 has been pending since DAY (Planned)
        f = p.stdout.strip().split("|")
        assert f[:4] == ["bench", "0", "0", "0"] and f[6] == "11520", p
        assert int(f[4]) + int(f[5]) == 11520, p
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


SEFF_JOBS = [
    {"job_id": 201, "user_name": "root", "group_id": 0, "state": "COMPLETED", "exit_code": 0,
     "submit_time": 1000, "start_time": 1000, "end_time": 1600, "num_cpus": 1, "num_nodes": 1,
     "mem_per_node": 1000},
    {"job_id": 202, "array_job_id": 200, "array_task_id": 3, "user_name": "daemon", "group_id": 1,
     "state": ["FAILED"], "exit_code": 512, "submit_time": 2000, "start_time": 2000,
     "end_time": 92000, "num_cpus": 8, "num_nodes": 2, "mem_per_cpu": 2000},
    {"job_id": 203, "user_name": "bin", "group_id": 2, "state": "PENDING", "submit_time": 3000,
     "num_cpus": 1, "num_nodes": 1, "mem_per_node": 100},
]
SEFF_STEPS = [
    {"job_id": 201, "submit_time": 1000, "step_id": "batch", "total_cpu": 300400000,
     "max_rss": 102400, "ntasks": 1},
    {"job_id": 202, "submit_time": 2000, "step_id": "batch", "total_cpu": 1000600000,
     "max_rss": 1000, "ntasks": 1},
    {"job_id": 202, "submit_time": 2000, "step_id": "0", "total_cpu": 360000700000,
     "max_rss": 4194304, "ntasks": 4, "gpu_util": 80, "start_time": 2000, "end_time": 92000},
]
# Worked by hand from the formulas of Slurm's contrib seff 2.1.
SEFF_EXPECTED = {
    "201": "Job ID: 201\nCluster: bench\nUser/Group: root/root\nState: COMPLETED (exit code 0)\n"
           "Cores: 1\nCPU Utilized: 00:05:00\nCPU Efficiency: 50.00% of 00:10:00 core-walltime\n"
           "Job Wall-clock time: 00:10:00\nMemory Utilized: 100.00 MB\n"
           "Memory Efficiency: 10.00% of 1000.00 MB\n",
    "202": "Job ID: 202\nArray Job ID: 200_3\nCluster: bench\nUser/Group: daemon/daemon\n"
           "State: FAILED (exit code 2)\nNodes: 2\nCores per node: 4\n"
           "CPU Utilized: 4-04:16:41\nCPU Efficiency: 50.14% of 8-08:00:00 core-walltime\n"
           "Job Wall-clock time: 1-01:00:00\nMemory Utilized: 16.00 GB (estimated maximum)\n"
           "Memory Efficiency: 102.40% of 15.62 GB (1.95 GB/core)\nGPU Utilization: 80.00%\n",
    "203": "Job ID: 203\nCluster: bench\nUser/Group: bin/bin\nState: PENDING\nCores: 1\n"
           "Efficiency not available for jobs in the PENDING state.\n",
}


def test_seff(dbd):
    recs = [{"job": j} for j in SEFF_JOBS] + [{"step": s} for s in SEFF_STEPS]
    for i, r in enumerate(recs):
        r["seq"] = i + 1
    assert dbd.call({"type": "dbd.job", "records": recs})["rc"] == 0
    for arg, want in list(SEFF_EXPECTED.items()) + [("200_3", SEFF_EXPECTED["202"])]:
        p = dbd.run(["seff", arg])
        assert (p.returncode, p.stdout, p.stderr) == (0, want, ""), arg
    p = dbd.run(["seff", "999"])
    assert (p.returncode, p.stdout, p.stderr) == (2, "", "Job not found.\n")
    p = dbd.run(["seff"])
    assert p.returncode == 1 and p.stdout.startswith("Usage: seff [Options] <Jobid>\n")
    p = dbd.run(["seff", "-v"])
    assert (p.returncode, p.stdout) == (1, "seff Version 2.1\n")
    p = dbd.run(["seff", "12x"])
    assert p.returncode == 1 and "Invalid job id" in p.stderr


def test_seff_running_job_from_controller(cluster):
    """A job the controller still runs (no loomdbd here): seff shows it from job.info."""
    p = cluster.run("sbatch", "--wrap=sleep 120", check=True)
    job_id = int(p.stdout.split()[-1])
    cluster.wait_job(job_id, "RUNNING")
    p = cluster.run("seff", job_id)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "Job ID: %d" % job_id and "State: RUNNING" in lines, p.stdout
    assert lines[-1] == "WARNING: Efficiency statistics may be misleading for RUNNING jobs."
    cluster.run("scancel", job_id)


def test_sreport_commands_from_stdin(dbd):
    """Without a command, sreport runs the lines of stdin (its interactive mode)."""
    load(dbd)
    w = "start=2026-11-18 end=2026-11-19"
    one = dbd.run(["sreport", "-P", "cluster", "utilization"] + w.split()).stdout
    p = subprocess.run([os.path.join(BIN, "sreport"), "-P"], input="cluster utilization %s\n"
                       "bogus\nquit\ncluster utilization %s\n" % (w, w), capture_output=True,
                       text=True, env=dbd.env, timeout=60)
    assert (p.stdout, p.stderr, p.returncode) == (one, "invalid keyword: bogus\n", 1)
