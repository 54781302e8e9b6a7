#!/usr/bin/env python3
"""sreport latency over N stored jobs (default 1,000,000: bench/acct.py's
generator, a job every 30 s over a year, written straight into the SQLite
store) with one capacity record: `sreport cluster utilization` and
`sreport user top` for one day in the middle of the table, and for the
last full day before today. Not a timed test.

  LOOM_BUILD_DIR=build/dev python3 bench/sreport.py [--jobs N]"""
import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
from acct import DAY, T0, fill_sqlite  # noqa: E402
from dbd_util import Dbd  # noqa: E402


def timed(d, argv, runs=9):
    times = []
    for _ in range(runs):
        t = time.time()
        p = d.run(argv)
        times.append(time.time() - t)
        assert p.returncode == 0, p.stderr
    return statistics.median(times), p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=1000000)
    ap.add_argument("--tmp", default="/tmp/loom-bench-sreport")
    a = ap.parse_args()
    subprocess.run(["rm", "-rf", a.tmp])
    os.makedirs(a.tmp)
    d = Dbd(a.tmp, "sqlite")
    d.call({"type": "dbd.job", "records": [{"seq": 1, "cluster_tres": {
        "time": T0 - DAY, "tres": "cpu=400,mem=3200G,node=100", "down_tres": ""}}]})
    d.stop()
    db = os.path.join(d.state, "loom_acct.db")
    fill_sqlite(db, a.jobs)
    sqlite3.connect(db).execute("ANALYZE").connection.close()
    d = Dbd(a.tmp, "sqlite")
    last = min((a.jobs * 30) // DAY, (int(time.time()) - T0) // DAY) - 1  # a past day
    try:
        for label, k in (("middle day", last // 2), ("last day", last)):
            s = time.strftime("%Y-%m-%d", time.gmtime(T0 + k * DAY))
            e = time.strftime("%Y-%m-%d", time.gmtime(T0 + (k + 1) * DAY))
            for rep in (["cluster", "utilization"], ["user", "top"]):
                lat, out = timed(d, ["sreport", "-n", "-P"] + rep + ["start=" + s, "end=" + e])
                print("%-40s %-16s %7.1f ms  %s" % ("sreport " + " ".join(rep), label,
                                                    lat * 1000, out.splitlines()[0]))
    finally:
        d.stop()


if __name__ == "__main__":
    main()
