"""loomctld: validation, scheduling, GPUs, cancel, holds, requeue, node states.

Jobs are submitted with job.submit over the Unix socket (the description keys
of messages.md §2), so these tests need only loomctld, loomd and loomstepd.
The cluster has two nodes with 4 CPUs, 4000 MiB and two fake GPUs each.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from conftest import Cluster

SLEEP = "#!/bin/sh\nsleep %d\n"


def rc_of(reply):
    return reply.get("rc")


# ---- rejected at submission: Slurm's errors, and no job is made ---------------------

# (what, description, error, the message sbatch prints before "Batch job
# submission failed: ..." or None) -- as slurmctld 22.05 answered on a
# one-host Slurm (bench/slurm_local.sh).
REJECTS = [
    ("unknown partition", {"partition": "nope"}, "LOOM_EINVAL_PARTITION",
     "invalid partition specified: nope"),
    ("more CPUs than a node", {"nodes": 1, "ntasks": 5}, "LOOM_ENODE_CONFIG", None),
    ("cpus per task", {"cpus_per_task": 5}, "LOOM_ENODE_CONFIG",
     "CPU count per node can not be satisfied"),
    ("memory", {"mem_per_node": 5000}, "LOOM_ENODE_CONFIG",
     "Memory specification can not be satisfied"),
    ("too many GPUs", {"gres": "gpu:3"}, "LOOM_ENODE_CONFIG", None),
    ("unknown GPU type", {"gres": "gpu:h100:1"}, "LOOM_ENODE_CONFIG", None),
    ("GRES not in GresTypes", {"gres": "fpga:1"}, "LOOM_EINVAL_GRES", None),
    ("bad GRES text", {"gres": "gpu:-1"}, "LOOM_EINVAL_GRES", None),
    ("unknown feature", {"constraint": "bigmem"}, "LOOM_ECONSTRAINT", None),
    ("unknown node", {"nodelist": "node9"}, "LOOM_EINVAL_NODENAME", None),
    ("bad dependency", {"dependency": "afterok:abc"}, "LOOM_EINVAL_DEPEND", None),
    ("bad dependency type", {"dependency": "foo:1"}, "LOOM_EINVAL_DEPEND", None),
]

@pytest.mark.parametrize("what,desc,want,line", REJECTS, ids=[r[0] for r in REJECTS])
def test_rejected(cluster, what, desc, want, line):
    from conftest import BIN
    reply = cluster.submit(**desc)
    assert rc_of(reply) == want, reply
    if line:
        assert reply["msg"] == line
    else:  # the error's own text: sbatch prints only "Batch job submission failed: ..."
        assert reply["msg"] and "'" not in reply["msg"], reply
    assert cluster.jobs() == {}


def test_over_partition_totals_pends(cluster):
    """slurmctld 22.05 accepts these (EnforcePartLimits=NO) and keeps them pending."""
    nodes = cluster.submit(nodes=3)["job_id"]
    cpus = cluster.submit(ntasks=9)["job_id"]
    cluster.wait_for(lambda: cluster.job(nodes)["reason"] == "PartitionNodeLimit", "reason")
    cluster.wait_for(lambda: cluster.job(cpus)["reason"] == "PartitionConfig", "reason")
    assert cluster.state_of(cluster.job(cpus)) == "PENDING"
    # an unknown job in --dependency counts as satisfied
    dep = cluster.submit(dependency="afterok:424242")["job_id"]
    cluster.wait_job(dep, "COMPLETED")


def test_enforce_part_limits_rejects_totals(make_cluster):
    c = make_cluster(conf_extra="EnforcePartLimits=ALL")
    assert rc_of(c.submit(nodes=3)) == "LOOM_EINVAL_NODECOUNT"
    assert rc_of(c.submit(ntasks=9)) == "LOOM_ETOO_MANY_CPUS"


def test_partition_time_limit_pends(make_cluster):
    c = make_cluster(partitions=["PartitionName=short Nodes=ALL Default=YES MaxTime=10"])
    reply = c.submit(time_limit=20)
    assert rc_of(reply) == 0
    job = c.wait_job(reply["job_id"], "PENDING")
    c.wait_for(lambda: c.job(reply["job_id"])["reason"] == "PartitionTimeLimit",
               "reason PartitionTimeLimit")
    # no --time: the partition's MaxTime becomes the limit
    j2 = c.submit()["job_id"]
    assert c.wait_job(j2, "COMPLETED")["time_limit"] == 10
    assert job["time_limit"] == 20


def test_enforce_part_limits_rejects(make_cluster):
    c = make_cluster(conf_extra="EnforcePartLimits=ALL",
                     partitions=["PartitionName=short Nodes=ALL Default=YES MaxTime=10"])
    assert rc_of(c.submit(time_limit=20)) == "LOOM_EINVAL_TIME"


# ---- running jobs ------------------------------------------------------------------

def test_exit_codes(cluster):
    ok = cluster.submit("#!/bin/sh\ntrue\n")["job_id"]
    bad = cluster.submit("#!/bin/sh\nexit 3\n")["job_id"]
    rec = cluster.wait_job(ok, "COMPLETED")
    assert rec["exit_code"] == 0 and rec["reason"] == "None"
    rec = cluster.wait_job(bad, "FAILED")
    assert rec["exit_code"] == 3 << 8
    assert rec["reason"] == "NonZeroExitCode"


def test_gpu_jobs_get_distinct_devices(cluster):
    script = "#!/bin/sh\necho CVD=$CUDA_VISIBLE_DEVICES\nsleep 30\n"
    ids = [cluster.submit(script, gres="gpu:1")["job_id"] for _ in range(4)]
    for i in ids:
        cluster.wait_job(i, "RUNNING")
    extra = cluster.submit(script, gres="gpu:1")["job_id"]
    used = {}
    for i in ids:
        rec = cluster.job(i)
        (a,) = rec["alloc"]
        (g,) = a["gres"]
        used.setdefault(a["node"], []).extend(g["index"])
    assert sorted(used) == ["node1", "node2"]
    for node, idx in used.items():
        assert sorted(idx) == [0, 1], used
    cluster.wait_for(lambda: cluster.job(extra)["reason"] in ("Resources", "Priority"),
                     "the fifth GPU job to wait for resources")
    assert cluster.state_of(cluster.job(extra)) == "PENDING"
    # every job sees its own device (loomd sets CUDA_VISIBLE_DEVICES)
    seen = {}
    for i in ids:
        out = cluster.work / ("slurm-%d.out" % i)
        cluster.wait_for(lambda: out.exists() and "CVD=" in out.read_text(), "output of %d" % i)
        node = cluster.job(i)["alloc"][0]["node"]
        seen.setdefault(node, set()).add(out.read_text().split("CVD=")[1].split()[0])
    assert all(len(v) == 2 for v in seen.values()), seen
    for i in ids + [extra]:
        cluster.rpc("job.signal", job_id=i, cancel=True, signal=9)


def test_never_overcommits_cpus(cluster):
    ids = [cluster.submit(SLEEP % 20, cpus_per_task=2)["job_id"] for _ in range(7)]
    cluster.wait_for(lambda: sum(cluster.state_of(j) == "RUNNING"
                                 for j in cluster.jobs().values()) == 4, "4 jobs running")
    time.sleep(0.5)
    jobs = cluster.jobs()
    assert sum(cluster.state_of(j) == "RUNNING" for j in jobs.values()) == 4
    for n in cluster.nodes().values():
        assert n["alloc_cpus"] <= 4
    pending = [j for j in jobs.values() if cluster.state_of(j) == "PENDING"]
    assert sorted(j["reason"] for j in pending) == ["Priority", "Priority", "Resources"]
    for i in ids:
        cluster.rpc("job.signal", job_id=i, cancel=True, signal=9)


def test_cancel_pending_and_running(cluster):
    run = cluster.submit(SLEEP % 60)["job_id"]
    cluster.wait_job(run, "RUNNING")
    held = cluster.submit(SLEEP % 60, hold=True)["job_id"]
    assert cluster.job(held)["reason"] == "JobHeldUser"
    assert rc_of(cluster.rpc("job.signal", job_id=held, cancel=True, signal=9)) == 0
    assert cluster.state_of(cluster.job(held)) == "CANCELLED"
    assert rc_of(cluster.rpc("job.signal", job_id=run, cancel=True, signal=9)) == 0
    rec = cluster.wait_job(run, "CANCELLED")
    assert rec["end_time"] >= rec["start_time"]
    cluster.wait_for(lambda: all(n["alloc_cpus"] == 0 for n in cluster.nodes().values()),
                     "resources released")
    # cancelling again is not an error; an unknown id is
    assert rc_of(cluster.rpc("job.signal", job_id=run, cancel=True, signal=9)) == 0
    assert rc_of(cluster.rpc("job.signal", job_id=99999, cancel=True, signal=9)) == \
        "LOOM_EINVAL_JOBID"


def test_signal_without_cancel(cluster):
    script = "#!/bin/sh\ntrap 'echo got USR1; exit 7' USR1\nwhile :; do sleep 0.2; done\n"
    j = cluster.submit(script)["job_id"]
    cluster.wait_job(j, "RUNNING")
    time.sleep(0.5)
    assert rc_of(cluster.rpc("job.signal", job_id=j, signal=int(signal.SIGUSR1),
                             batch_only=True)) == 0
    rec = cluster.wait_job(j, "FAILED")
    assert rec["exit_code"] == 7 << 8
    assert "got USR1" in (cluster.work / ("slurm-%d.out" % j)).read_text()


def test_hold_release_and_requeue(cluster):
    j = cluster.submit(SLEEP % 60, hold=True)["job_id"]
    assert cluster.job(j)["priority"] == 0
    assert rc_of(cluster.rpc("job.release", job_ids=[j])) == 0
    cluster.wait_job(j, "RUNNING")
    r = cluster.rpc("job.requeue", job_ids=[j])
    assert r["results"][0]["rc"] == 0, r
    rec = cluster.job(j)
    assert cluster.state_of(rec) == "PENDING"
    assert rec["restart_cnt"] == 1
    cluster.wait_job(j, "RUNNING")
    # hold a running job: refused as Slurm does
    r = cluster.rpc("job.hold", job_ids=[j])
    assert r["results"][0]["rc"] == "LOOM_EDISABLED"
    cluster.rpc("job.signal", job_id=j, cancel=True, signal=9)


def test_update_and_priority_order(cluster):
    # fill the cluster, then queue two jobs and swap their order by priority
    blockers = [cluster.submit(SLEEP % 60, cpus_per_task=4)["job_id"] for _ in range(2)]
    for b in blockers:
        cluster.wait_job(b, "RUNNING")
    a = cluster.submit(SLEEP % 1, cpus_per_task=4)["job_id"]
    b = cluster.submit(SLEEP % 1, cpus_per_task=4, time_limit=30)["job_id"]
    prio_a = cluster.job(a)["priority"]
    r = cluster.rpc("job.update", job_id=b, changes={"Priority": prio_a + 10, "TimeLimit": 5,
                                                     "Name": "renamed"})
    assert rc_of(r) == 0, r
    rec = cluster.job(b)
    assert rec["time_limit"] == 5 and rec["name"] == "renamed"
    assert rc_of(cluster.rpc("job.update", job_id=b, changes={"Bogus": 1})) == \
        "LOOM_ENOT_SUPPORTED"
    cluster.rpc("job.signal", job_id=blockers[0], cancel=True, signal=9)
    rec = cluster.wait_job(b, "RUNNING", "COMPLETED")
    assert cluster.state_of(cluster.job(a)) == "PENDING"
    for j in blockers + [a, b]:
        cluster.rpc("job.signal", job_id=j, cancel=True, signal=9)


def rpc_as(cluster, uid, type_, **body):
    """One request from another uid (the socket identifies callers by SO_PEERCRED)."""
    code = ("import json,sys\nsys.path.insert(0,%r)\nfrom conftest import Rpc\n"
            "print(json.dumps(Rpc(%r).call(%r, **json.loads(sys.argv[1]))))"
            % (os.path.dirname(__file__), str(cluster.sock), type_))
    p = subprocess.run([sys.executable, "-c", code, json.dumps(body)], user=uid,
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to act as another user")
def test_users_touch_only_their_own_jobs(cluster):
    nobody = 65534
    mine = cluster.submit(SLEEP % 60, hold=True)["job_id"]
    r = rpc_as(cluster, nobody, "job.submit", script=SLEEP % 60,
               job={"name": "n", "work_dir": "/tmp", "hold": True, "time_limit": 30})
    theirs = r["job_id"]
    assert cluster.job(theirs)["user_id"] == nobody
    assert rc_of(rpc_as(cluster, nobody, "job.signal", job_id=mine, cancel=True, signal=9)) == \
        "LOOM_EACCESS"
    # slurmctld 22.05.8's "Invalid user id" for another user's job
    assert rc_of(rpc_as(cluster, nobody, "job.update", job_id=mine,
                        changes={"TimeLimit": 1})) == "LOOM_EUSER_ID"
    # a user may lower their own limit, and raise a pending job's (not a running one's)
    assert rc_of(rpc_as(cluster, nobody, "job.update", job_id=theirs,
                        changes={"TimeLimit": 10})) == 0
    assert rc_of(rpc_as(cluster, nobody, "job.update", job_id=theirs,
                        changes={"TimeLimit": 20})) == 0
    assert cluster.job(theirs)["time_limit"] == 20
    # admin-only requests
    assert rc_of(rpc_as(cluster, nobody, "node.update", nodes="node1", state="DRAIN",
                        reason="x")) == "LOOM_EPERM"
    assert rc_of(rpc_as(cluster, nobody, "shutdown")) == "LOOM_EPERM"
    # an admin hold cannot be released by the user
    assert cluster.rpc("job.hold", job_ids=[theirs])["results"][0]["rc"] == 0
    r = rpc_as(cluster, nobody, "job.release", job_ids=[theirs])
    assert r["results"][0]["rc"] == "LOOM_EACCESS"
    for j in (mine, theirs):
        cluster.rpc("job.signal", job_id=j, cancel=True, signal=9)


def test_dependency(cluster):
    first = cluster.submit("#!/bin/sh\nsleep 1\nexit 1\n")["job_id"]
    ok = cluster.submit(dependency="afterok:%d" % first)["job_id"]
    notok = cluster.submit(dependency="afternotok:%d" % first)["job_id"]
    assert cluster.job(ok)["reason"] in ("None", "Dependency")
    cluster.wait_job(first, "FAILED")
    cluster.wait_job(notok, "COMPLETED")
    cluster.wait_for(lambda: cluster.job(ok)["reason"] == "DependencyNeverSatisfied",
                     "afterok on a failed job never satisfied")
    cluster.rpc("job.signal", job_id=ok, cancel=True, signal=9)


# ---- nodes ----------------------------------------------------------------------------

def test_drain_and_resume(cluster):
    r = cluster.rpc("node.update", nodes="node1", state="DRAIN", reason="maint")
    assert rc_of(r) == 0
    n1 = cluster.nodes()["node1"]
    assert n1["state"] == ["IDLE", "DRAIN"] and n1["reason"] == "maint"
    assert rc_of(cluster.rpc("node.update", nodes="node1", state="DOWN")) != 0  # no reason
    ids = [cluster.submit(SLEEP % 30, cpus_per_task=4)["job_id"] for _ in range(2)]
    cluster.wait_job(ids[0], "RUNNING")
    time.sleep(0.5)
    assert cluster.job(ids[0])["nodes"] == "node2"
    assert cluster.state_of(cluster.job(ids[1])) == "PENDING"
    assert rc_of(cluster.rpc("node.update", nodes="node1", state="RESUME")) == 0
    rec = cluster.wait_job(ids[1], "RUNNING")
    assert rec["nodes"] == "node1"
    assert "reason" not in cluster.nodes()["node1"]
    for j in ids:
        cluster.rpc("job.signal", job_id=j, cancel=True, signal=9)


def test_node_down_requeues_its_jobs(cluster):
    j = cluster.submit(SLEEP % 60, cpus_per_task=4)["job_id"]
    first = cluster.wait_job(j, "RUNNING")["nodes"]
    assert rc_of(cluster.rpc("node.update", nodes=first, state="DOWN", reason="broken")) == 0
    other = "node2" if first == "node1" else "node1"
    rec = cluster.wait_job(j, "RUNNING", timeout=30)
    assert rec["nodes"] == other and rec["restart_cnt"] == 1
    assert cluster.nodes()[first]["state"] == ["DOWN"]
    cluster.rpc("job.signal", job_id=j, cancel=True, signal=9)


@pytest.mark.parametrize("rts", [0, 1, 2])
def test_loomd_timeout_and_return(make_cluster, rts):
    c = make_cluster(conf_extra="SlurmdTimeout=3\nReturnToService=%d" % rts)
    j = c.submit(SLEEP % 60, nodelist="node2")["job_id"]
    c.wait_job(j, "RUNNING")
    c.stop_node("node2", signal.SIGKILL)
    c.wait_for(lambda: c.nodes()["node2"]["state"] == ["DOWN", "NOT_RESPONDING"],
               "node2 DOWN after SlurmdTimeout", timeout=20)
    assert c.nodes()["node2"]["reason"] == "Not responding"
    rec = c.job(j)  # requeued (JobRequeue=1), waiting for node2
    assert c.state_of(rec) == "PENDING" and rec["restart_cnt"] == 1
    c.start_node("node2")
    if not rts:  # ReturnToService=0: stays DOWN until an admin resumes it
        time.sleep(2)
        assert c.nodes()["node2"]["state"][0] == "DOWN"
        assert rc_of(c.rpc("node.update", nodes="node2", state="RESUME")) == 0
    rec = c.wait_job(j, "RUNNING")  # back in service: the requeued job runs there again
    assert rec["nodes"] == "node2"
    # The first run's supervisor outlived its loomd; the controller has it killed.
    first_run = "%s " % (c.root / "spool" / "node2" / ("job%d" % j))
    c.wait_for(lambda: not any(first_run in stepd_cmdline(p)
                               for p in stepd_pids(c.root / "spool" / "node2")),
               "the first run's supervisor to be killed", timeout=30)
    c.rpc("job.signal", job_id=j, cancel=True, signal=9)


def test_controller_restart_reattaches_running_job(cluster):
    j = cluster.submit("#!/bin/sh\ntouch started\nsleep 4\necho done\n")["job_id"]
    cluster.wait_job(j, "RUNNING")
    # Launched: its start is durable (the launch is sent only after the
    # journal's fsync); RUNNING alone may still be in memory only.
    cluster.wait_for(lambda: (cluster.work / "started").exists(), "the job's script ran")
    cluster.kill_ctld(signal.SIGKILL)
    cluster.start_ctld()
    assert cluster.state_of(cluster.job(j)) in ("RUNNING", "COMPLETED")
    rec = cluster.wait_job(j, "COMPLETED", timeout=30)
    assert rec.get("restart_cnt", 0) == 0


def test_min_job_age_purges(make_cluster):
    c = make_cluster(conf_extra="MinJobAge=2", nodes=1, gpus=0)
    j = c.submit()["job_id"]
    c.wait_job(j, "COMPLETED")
    c.wait_for(lambda: j not in c.jobs(), "job purged after MinJobAge", timeout=10)
    assert rc_of(c.rpc("job.info", job_ids=[j])) == "LOOM_EINVAL_JOBID"


def test_time_limit_kills(make_cluster):
    c = make_cluster(nodes=1, gpus=0)
    j = c.submit("#!/bin/sh\nsleep 300\n", time_limit=1)["job_id"]
    c.wait_job(j, "RUNNING")
    rec = c.wait_job(j, "TIMEOUT", timeout=90)
    assert rec["reason"] == "TimeLimit"
    out = (c.work / ("slurm-%d.out" % j)).read_text()
    assert "DUE TO TIME LIMIT ***" in out and ("JOB %d ON node1 CANCELLED AT" % j) in out
    assert c.nodes()["node1"]["alloc_cpus"] == 0


def test_info_records(cluster):
    j = cluster.submit(SLEEP % 30, gres="gpu:1", ntasks=2, time_limit=5)["job_id"]
    rec = cluster.wait_job(j, "RUNNING")
    for key in ("job_id", "name", "user_name", "partition", "state", "reason", "priority",
                "submit_time", "start_time", "end_time", "time_limit", "nodes", "num_nodes",
                "num_cpus", "num_tasks", "tres_req", "tres_alloc", "tres_per_node",
                "work_dir", "batch_host", "exit_code"):
        assert key in rec, key
    assert rec["tres_per_node"] == "gres/gpu:1"
    assert rec["end_time"] == rec["start_time"] + 300
    node = cluster.nodes()[rec["batch_host"]]
    assert node["state"] == ["MIXED"] and node["alloc_cpus"] == 2
    assert "IDX:" in node["gres_used"]
    parts = cluster.rpc("part.info")["partitions"]
    assert parts[0]["name"] == "debug" and parts[0]["state"] == "UP"
    conf = dict(cluster.rpc("config.info")["config"])
    assert conf["ClusterName"] == "loomtest" and "NEXT_JOB_ID" in conf
    # The step's I/O goes to a socket that listens (the kernel's backlog takes
    # the connection) and its task sleeps: it is still there when asked.
    io = socket.socket()
    io.bind(("127.0.0.1", 0))
    io.listen(8)
    try:
        steps = cluster.rpc("step.create", job_id=j, ntasks=2, nodes=1, name="sleeper",
                            argv=["sleep", "30"],
                            io={"host": "127.0.0.1", "port": io.getsockname()[1]})
        assert rc_of(steps) == 0 and steps["step_id"] == 0 and steps["tasks_per_node"] == [2]
        with_steps = cluster.rpc("job.info", job_ids=[j], steps=True)["jobs"][0]
        assert with_steps["steps"][0]["name"] == "sleeper", with_steps
    finally:
        cluster.rpc("job.signal", job_id=j, cancel=True, signal=9)
        io.close()


def test_reconfigure_keeps_jobs(cluster):
    j = cluster.submit(SLEEP % 30)["job_id"]
    cluster.wait_job(j, "RUNNING")
    held = cluster.submit(hold=True)["job_id"]
    assert rc_of(cluster.rpc("reconfigure")) == 0
    assert cluster.state_of(cluster.job(j)) == "RUNNING"
    assert cluster.job(held)["reason"] == "JobHeldUser"
    assert all(n["state"][0] in ("IDLE", "MIXED") for n in cluster.nodes().values())
    assert rc_of(cluster.rpc("job.signal", job_id=j, cancel=True, signal=9)) == 0
    cluster.wait_job(j, "CANCELLED")


def test_shutdown_stops_everything(cluster):
    assert rc_of(cluster.rpc("shutdown")) == 0
    cluster.ctld.proc.wait(timeout=10)
    for d in cluster.loomds.values():
        d.proc.wait(timeout=10)


def signed_frame(obj, key):
    import hashlib
    import hmac
    import struct
    obj = dict(obj)
    obj["auth"] = {"ts": int(time.time()), "nonce": int.from_bytes(os.urandom(7), "big"),
                   "sender": obj.get("node", "x")}
    text = json.dumps(obj, separators=(",", ":")).encode()
    body = text + b"\0" + hmac.new(key, text, hashlib.sha256).digest()
    return struct.pack(">I", len(body)) + body


def test_registration_with_less_hardware_drains(make_cluster):
    """A node reporting fewer CPUs or less memory than slurm.conf is drained (INVALID_REG)."""
    import socket
    from conftest import recv_frame
    c = make_cluster(nodes=2, gpus=0, start=False)
    c.start_ctld()
    key = (c.root / "slurm.key").read_bytes()
    s = socket.create_connection(("127.0.0.1", c.ctld_port), timeout=10)
    reg = {"v": 1, "type": "node.register", "id": 1, "node": "node1", "cpus": 2, "boards": 1,
           "sockets": 2, "cores": 1, "threads": 1, "real_memory": 4000, "tmp_disk": 0,
           "gres": [], "port": c.node_ports["node1"], "version": "22.05.8", "boot_time": 0,
           "jobs": []}
    s.sendall(signed_frame(reg, key))
    reply = recv_frame(s)
    assert reply["rc"] == 0 and reply["config_ok"] is False
    assert "Low CPUs" in reply["reason"]
    n1 = c.nodes()["node1"]
    assert "DRAIN" in n1["state"] and "INVALID_REG" in n1["state"]
    assert n1["reason"].startswith("Low CPUs (reported:2 < configured:4)")
    reg.update(id=2, cpus=4, real_memory=1000)
    s.sendall(signed_frame(reg, key))
    reply = recv_frame(s)
    assert "Low RealMemory (reported:1000 < 100.00% of configured:4000)" in reply["reason"]
    s.close()


def test_job_ids_wrap_and_max_job_count(make_cluster):
    c = make_cluster(nodes=1, gpus=0,
                     conf_extra="FirstJobId=100\nMaxJobId=102\nMinJobAge=1\nMaxJobCount=3")
    ids = [c.submit()["job_id"] for _ in range(3)]
    assert ids == [100, 101, 102]
    assert rc_of(c.submit()) == "LOOM_EJOB_LIMIT"
    for j in ids:
        c.wait_job(j, "COMPLETED")
    c.wait_for(lambda: not c.jobs(), "jobs purged", timeout=10)
    assert c.submit()["job_id"] == 100


def test_loomd_restart_while_job_runs(cluster):
    j = cluster.submit("#!/bin/sh\nsleep 3\necho finished\n")["job_id"]
    node = cluster.wait_job(j, "RUNNING")["batch_host"]
    cluster.stop_node(node, signal.SIGKILL)
    time.sleep(0.5)
    cluster.start_node(node)
    rec = cluster.wait_job(j, "COMPLETED", timeout=30)
    assert rec.get("restart_cnt", 0) == 0
    assert "finished" in (cluster.work / ("slurm-%d.out" % j)).read_text()


def test_loomd_killed_before_taking_launch(cluster):
    """loomd dies with the job.launch unread: the job runs once, not requeued."""
    d = cluster.loomds["node1"]
    d.proc.send_signal(signal.SIGSTOP)
    try:
        j = cluster.submit("#!/bin/sh\necho finished\n", nodelist="node1")["job_id"]
        cluster.wait_job(j, "RUNNING")
        time.sleep(0.3)  # the launch frame reaches the stopped loomd's socket
    finally:
        cluster.stop_node("node1", signal.SIGKILL)
    cluster.start_node("node1")
    rec = cluster.wait_job(j, "COMPLETED", timeout=30)
    assert rec.get("restart_cnt", 0) == 0
    assert "finished" in (cluster.work / ("slurm-%d.out" % j)).read_text()
    assert "launching again" in (cluster.logdir / "loomctld.log").read_text()


def stepd_cmdline(pid):
    """The process's command line, arguments ending in a space ("" once gone)."""
    try:
        return open("/proc/%s/cmdline" % pid, "rb").read().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def stepd_pids(spool):
    """Supervisors whose command line names this spool directory (ours only)."""
    pids = []
    for d in os.listdir("/proc"):
        cmd = stepd_cmdline(d) if d.isdigit() else ""
        if "loomstepd" in cmd and str(spool) in cmd:
            pids.append(int(d))
    return pids


def test_job_missing_on_reregistration_is_requeued(cluster):
    """The node comes back without the job the controller placed there: node failure."""
    j = cluster.submit("#!/bin/sh\ntouch started\nsleep 60\n")["job_id"]
    node = cluster.wait_job(j, "RUNNING")["batch_host"]
    # The node has it (RUNNING alone may come before the launch is sent).
    cluster.wait_for(lambda: (cluster.work / "started").exists(), "the job's script ran")
    cluster.stop_node(node, signal.SIGKILL)
    spool = cluster.root / "spool" / node
    for pid in stepd_pids(spool):
        os.killpg(os.getpgid(pid), signal.SIGKILL)
    time.sleep(0.3)
    job_dir = spool / ("job%d" % j)
    if job_dir.exists():
        import shutil
        shutil.rmtree(job_dir)
    cluster.start_node(node)
    cluster.wait_for(lambda: cluster.job(j).get("restart_cnt", 0) == 1,
                     "the job requeued after its node lost it")
    cluster.rpc("job.signal", job_id=j, cancel=True, signal=9)
