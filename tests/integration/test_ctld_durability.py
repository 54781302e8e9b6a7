"""The durability promise: a job id the controller acknowledged survives kill -9.

Many clients submit concurrently; loomctld is killed with SIGKILL in the middle
of the stream; after a restart every job id that was acknowledged (that
sbatch printed) must exist. The replies are sent only once the journal entry
is fsynced, so this holds at any moment of the kill. A second round repeats it
on top of the snapshot the first restart wrote.

sbatch is used when it is built; otherwise a small client speaks the frame
format to the Unix socket, as sbatch does.
"""
import concurrent.futures
import os
import signal
import threading
import time

import pytest

from conftest import BIN, Rpc

TOTAL = int(os.environ.get("LOOM_DURABILITY_JOBS", "1000"))
WORKERS = 16


class Submitter:
    """Submits until told to stop; records every acknowledged job id."""

    def __init__(self, cluster, use_sbatch):
        self.c = cluster
        self.use_sbatch = use_sbatch
        self.acked = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.errors = 0

    def one(self, i):
        if self.stop.is_set():
            return
        try:
            if self.use_sbatch:
                p = self.c.run("sbatch", "--parsable", "-J", "d%d" % i, "--wrap=true",
                               timeout=60)
                if p.returncode != 0:
                    raise OSError(p.stderr)
                job_id = int(p.stdout.strip().split(";")[0])
            else:
                r = Rpc(self.c.sock, timeout=30)
                try:
                    reply = r.call("job.submit", script="#!/bin/sh\ntrue\n",
                                   job={"name": "d%d" % i, "work_dir": str(self.c.work)})
                finally:
                    r.close()
                if reply.get("rc") != 0:
                    raise OSError(str(reply))
                job_id = reply["job_id"]
        except (OSError, ValueError, ConnectionError):
            with self.lock:
                self.errors += 1
            return
        with self.lock:
            self.acked.append(job_id)

    def run(self, n, kill_after):
        """Submit n jobs; SIGKILL the controller once kill_after are acknowledged."""
        killer = threading.Thread(target=self._killer, args=(kill_after,))
        killer.start()
        with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
            list(pool.map(self.one, range(n)))
        self.stop.set()
        killer.join()

    def _killer(self, kill_after):
        while not self.stop.is_set():
            with self.lock:
                if len(self.acked) >= kill_after:
                    break
            time.sleep(0.001)
        self.c.kill_ctld(signal.SIGKILL)
        self.stop.set()


def check_all_exist(cluster, acked):
    jobs = cluster.jobs()
    missing = sorted(set(acked) - set(jobs))
    assert not missing, "acknowledged but lost after kill -9: %s" % missing[:20]
    # every id is unique: no id handed out twice across the crash
    assert len(set(acked)) == len(acked)


def test_kill9_during_submissions(make_cluster):
    c = make_cluster(nodes=1, gpus=0, start=False)
    c.start_ctld()
    use_sbatch = (BIN / "sbatch").exists()
    s = Submitter(c, use_sbatch)
    s.run(TOTAL, kill_after=TOTAL // 2)
    print("acked", len(s.acked), "errors", s.errors)
    assert len(s.acked) >= TOTAL // 2
    c.start_ctld()
    check_all_exist(c, s.acked)

    # Round two: on top of the snapshot written at recovery; ids keep growing.
    s2 = Submitter(c, use_sbatch)
    s2.run(TOTAL // 2, kill_after=TOTAL // 4)
    c.start_ctld()
    check_all_exist(c, s.acked + s2.acked)
    assert min(s2.acked) > max(s.acked) - WORKERS * 2 or set(s2.acked).isdisjoint(s.acked)


def test_restart_keeps_state_and_ids(make_cluster):
    """A clean restart keeps pending jobs, holds and the next id."""
    c = make_cluster(nodes=1, gpus=0, start=False)
    c.start_ctld()
    ids = [c.submit()["job_id"] for _ in range(5)]
    assert c.rpc("job.hold", job_ids=[ids[1]])["rc"] == 0
    assert c.rpc("job.signal", job_id=ids[2], cancel=True, signal=9)["rc"] == 0
    c.kill_ctld(signal.SIGTERM)
    c.start_ctld()
    jobs = c.jobs()
    assert set(ids) <= set(jobs)
    assert jobs[ids[1]]["reason"] == "JobHeldAdmin"
    assert jobs[ids[1]]["priority"] == 0
    assert c.state_of(jobs[ids[2]]) == "CANCELLED"
    new = c.submit()["job_id"]
    assert new == ids[-1] + 1


def test_torn_journal_tail_is_ignored(make_cluster):
    c = make_cluster(nodes=1, gpus=0, start=False)
    c.start_ctld()
    ids = [c.submit()["job_id"] for _ in range(3)]
    c.kill_ctld(signal.SIGKILL)
    segs = sorted(p for p in c.state.iterdir() if p.name.startswith("journal."))
    with open(segs[-1], "ab") as f:
        f.write(b'{"seq":999999,"ev":"job.sub')
    c.start_ctld()
    assert set(ids) <= set(c.jobs())
