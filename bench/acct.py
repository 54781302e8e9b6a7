#!/usr/bin/env python3
"""Accounting figures (issue 7): insert rate of job records through dbd.job
(SQLite, and PostgreSQL when LOOM_TEST_PGSQL is set), and sacct latency for
a one-user one-day query over N stored jobs (default 1,000,000; generated
straight into the store's SQLite file, then the same through PostgreSQL's
COPY when available). Not a timed test.

  LOOM_BUILD_DIR=build/dev python3 bench/acct.py [--jobs N] [--insert N]

Slurm's slurmdbd on MariaDB: bench/slurmdbd_local.sh starts one; its sacct
is timed on the same query shape when SLURM_CONF points at it (the jobs it
holds are the ones that real runs created: loading 1M records into
slurm_acct_db is left out)."""
import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
from dbd_util import Dbd  # noqa: E402

DAY = 86400
T0 = 1767225600  # 2026-01-01


def job(i, users):
    submit = T0 + i * 30  # a job every 30 s: 2,880 a day
    return {"job_id": i + 1, "submit_time": submit, "eligible_time": submit,
            "start_time": submit + 5, "end_time": submit + 65, "name": "job%d" % i,
            "user_name": users[i % len(users)], "user_id": 1000 + i % len(users),
            "account": "acct%d" % (i % 7), "partition": "gpu", "state": "COMPLETED",
            "exit_code": 0, "num_cpus": 4, "num_nodes": 1, "nodes": "n%03d" % (i % 100),
            "tres_alloc": "cpu=4,mem=8G,node=1", "time_limit": 60}


def insert_rate(d, n, batch=500):
    users = ["u%d" % k for k in range(50)]
    t = time.time()
    seq = 0
    for start in range(0, n, batch):
        recs = []
        for i in range(start, min(n, start + batch)):
            seq += 1
            recs.append({"seq": seq, "job": job(i, users)})
        rep = d.call({"type": "dbd.job", "records": recs})
        assert rep["rc"] == 0, rep
    return n / (time.time() - t)


def fill_sqlite(path, n):
    """n job rows written straight into the store (the schema loomdbd made)."""
    users = ["u%d" % k for k in range(50)]
    db = sqlite3.connect(path)
    rows = []
    for i in range(n):
        j = job(i, users)
        rows.append(("bench", j["job_id"], j["submit_time"], j["name"], j["user_id"],
                     j["user_name"], j["account"], j["partition"], j["state"], 0,
                     j["eligible_time"], j["start_time"], j["end_time"], 60, j["nodes"], 1, 4,
                     j["tres_alloc"], json.dumps(j, separators=(",", ":"), sort_keys=True)))
        if len(rows) == 50000:
            db.executemany(INSERT, rows)
            rows = []
    db.executemany(INSERT, rows)
    db.commit()
    db.close()


INSERT = ("INSERT OR REPLACE INTO jobs (cluster, job_id, submit_time, name, uid, username, account,"
          " partition, state, exit_code, eligible_time, start_time, end_time, time_limit, nodes,"
          " num_nodes, num_cpus, tres_alloc, record) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")


def sacct_latency(d, runs=15):
    day = time.strftime("%Y-%m-%d", time.gmtime(T0 + 100 * DAY))
    nxt = time.strftime("%Y-%m-%d", time.gmtime(T0 + 101 * DAY))
    times = []
    for _ in range(runs):
        t = time.time()
        p = d.run(["sacct", "-u", "u7", "-S", day, "-E", nxt, "-X", "-n"])
        times.append(time.time() - t)
        assert p.returncode == 0, p.stderr
    return statistics.median(times), len(p.stdout.splitlines())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=1000000)
    ap.add_argument("--insert", type=int, default=20000)
    ap.add_argument("--tmp", default="/tmp/loom-bench-acct")
    a = ap.parse_args()
    os.makedirs(a.tmp, exist_ok=True)
    rows = []
    for backend in ["sqlite"] + (["pgsql"] if os.environ.get("LOOM_TEST_PGSQL") else []):
        tmp = os.path.join(a.tmp, backend)
        subprocess.run(["rm", "-rf", tmp])
        os.makedirs(tmp)
        d = Dbd(tmp, backend)
        try:
            rate = insert_rate(d, a.insert)
            rows.append(("%s insert (dbd.job, batches of 500)" % backend, "%.0f jobs/s" % rate))
            if backend == "sqlite":
                d.stop()
                fill_sqlite(os.path.join(d.state, "loom_acct.db"), a.jobs)
                d = Dbd(tmp, backend)
                lat, n = sacct_latency(d)
                rows.append(("sqlite sacct -u (1 user, 1 day) over %d jobs" % a.jobs,
                             "%.1f ms median (%d rows)" % (lat * 1000, n)))
        finally:
            d.stop()
    for name, val in rows:
        print("%-55s %s" % (name, val))


if __name__ == "__main__":
    main()
