"""loomctld's snapshot keeps finished jobs with their nodes, but after a restart
they must not hold those CPUs again (they did: 'its allocation overlaps another
one', and a full-looking cluster that started nothing after kill -9)."""
import signal


def test_finished_jobs_in_snapshot_hold_nothing(make_cluster):
    c = make_cluster(nodes=1, cpus=2, gpus=0)
    ids = [c.submit("#!/bin/sh\ntrue\n", ntasks=1)["job_id"] for _ in range(2)]
    for j in ids:
        c.wait_job(j, "COMPLETED")
    # A restart writes a snapshot holding the two COMPLETED jobs (with their CPUs).
    c.kill_ctld(signal.SIGTERM)
    c.start_ctld()
    c.kill_ctld(signal.SIGKILL)
    c.start_ctld()  # restored from that snapshot
    c.wait_nodes("IDLE")
    j = c.submit("#!/bin/sh\ntrue\n", ntasks=2)["job_id"]
    c.wait_job(j, "COMPLETED", timeout=30)
    assert "overlaps another one" not in (c.logdir / "loomctld.log").read_text()
