"""squeue, sinfo, scontrol and scancel against a real Loom cluster (conftest's
`cluster`: loomctld + two loomd, 4 CPUs and 2 fake GPUs each).

The layouts themselves are compared byte for byte with real Slurm in
test_cli_layouts.py; here the commands talk to the real controller: filters,
updates, holds, cancels, exit codes and Slurm's messages.
"""
import calendar
import json
import os
import re
import subprocess
import signal
import time

import pytest

from conftest import BIN, SANITIZER_MARKS

SQUEUE_HEADER = ("             JOBID PARTITION     NAME     USER ST       TIME  NODES "
                 "NODELIST(REASON)")
SINFO_HEADER = "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST"


def run(cluster, *args, rc=0, **kw):
    p = cluster.run(*args, **kw)
    assert not any(m in p.stderr for m in SANITIZER_MARKS), p.stderr
    if rc is not None:
        assert p.returncode == rc, "%s -> %d\n%s%s" % (args, p.returncode, p.stdout, p.stderr)
    return p


def sleeper(cluster, name="sleeper", secs=60, **desc):
    reply = cluster.submit(script="#!/bin/sh\nsleep %d\n" % secs, name=name, **desc)
    assert reply["rc"] == 0, reply
    return reply["job_id"]


def test_squeue_default_layout_and_filters(cluster):
    a = sleeper(cluster, "alpha")
    cluster.wait_job(a, "RUNNING")
    b = sleeper(cluster, "beta", hold=True)
    out = run(cluster, "squeue").stdout.splitlines()
    assert out[0] == SQUEUE_HEADER
    row_a = [l for l in out if l.split()[0] == str(a)][0]
    assert re.match(r"^ {1,18}%d     debug    alpha +\S+  R +\d+:\d\d      1 node\d$" % a, row_a)
    row_b = [l for l in out if l.split()[0] == str(b)][0]
    assert row_b.endswith(" PD       0:00      1 (JobHeldUser)"), row_b
    # pending before running in one partition (Slurm's "P,t,-p")
    assert out.index(row_b) < out.index(row_a)
    assert run(cluster, "squeue", "-h", "-t", "pd", "-o", "%i").stdout.split() == [str(b)]
    assert run(cluster, "squeue", "-h", "--states=RUNNING", "-o", "%j").stdout.split() == ["alpha"]
    assert run(cluster, "squeue", "-h", "-n", "beta", "-o", "%i").stdout.split() == [str(b)]
    assert run(cluster, "squeue", "-h", "-j", str(a), "-o", "%i %T").stdout == "%d RUNNING\n" % a
    assert run(cluster, "squeue", "-h", "-u", cluster.user, "-o", "%i").stdout.split() == [
        str(b), str(a)]
    assert run(cluster, "squeue", "-h", "-p", "nosuch").stdout == ""
    node = cluster.job(a)["nodes"]
    assert run(cluster, "squeue", "-h", "-w", node, "-o", "%i").stdout.split() == [str(a)]
    long_out = run(cluster, "squeue", "-O", "JobID,Name:10,State:.9").stdout.splitlines()
    assert long_out[0] == "JOBID               NAME          STATE"
    p = run(cluster, "squeue", "-j", "99999", rc=1)
    assert p.stderr == "slurm_load_jobs error: Invalid job id specified\n"
    p = run(cluster, "squeue", "-t", "bogus", rc=1)
    assert "squeue: error: Invalid job state specified: bogus" in p.stderr


def test_squeue_state_order_and_min_cpus(cluster):
    """squeue 22.05 (checked side by side) sorts states by name: CANCELLED,
    COMPLETING, PENDING, RUNNING; %c is
    the CPUs per node a job asks for (CPUs/task), not its total."""
    def sub(*args):
        return int(run(cluster, "sbatch", "--parsable", *args).stdout.split(";")[0])
    a = sub("-n", "4", "--wrap", "sleep 60")
    cluster.wait_job(a, "RUNNING")
    b = sub("-H", "--wrap", "true")
    c = sub("-H", "--wrap", "true")
    run(cluster, "scancel", str(c))
    cluster.wait_job(c, "CANCELLED")
    out = run(cluster, "squeue", "-h", "-t", "all", "-o", "%i %t %c %C").stdout
    assert out == "%d CA 1 1\n%d PD 1 1\n%d R 1 4\n" % (c, b, a)
    out = run(cluster, "squeue", "-h", "-S", "-t", "-t", "all", "-o", "%i").stdout
    assert out.split() == [str(a), str(b), str(c)]
    # several keys, each with its direction; C (CPUs) is not a member squeue's lean listing asks for
    out = run(cluster, "squeue", "-h", "-S", "-i", "-t", "all", "-o", "%i").stdout
    assert out.split() == [str(c), str(b), str(a)]
    out = run(cluster, "squeue", "-h", "-S", "C,-i", "-t", "all", "-o", "%i").stdout
    assert out.split() == [str(c), str(b), str(a)]
    out = run(cluster, "squeue", "-h", "-S", "-C,i", "-t", "all", "-o", "%i").stdout
    assert out.split() == [str(a), str(b), str(c)]
    # -u is filtered by the controller too: another user's listing is empty
    assert run(cluster, "squeue", "-h", "-u", "nobody", "-t", "all").stdout == ""
    assert run(cluster, "squeue", "-h", "-u", "nobody,%s" % cluster.user, "-t", "all",
               "-o", "%i").stdout.split() == [str(c), str(b), str(a)]
    # -w takes a NodeHostname too (every node here is "localhost"), as 22.05 does
    assert run(cluster, "squeue", "-h", "-w", "localhost", "-o", "%i").stdout == "%d\n" % a


def test_squeue_completing_job(make_cluster):
    """A cancelled job that ignores SIGTERM stays COMPLETING for KillWait: squeue
    22.05 lists it under -t CG only (not -t CA), sorts it after a CANCELLED job
    and lists its batch step under -s (checked side by side)."""
    c = make_cluster(start=False, nodes=1)
    c.conf.write_text(c.conf.read_text().replace("KillWait=2", "KillWait=60"))
    c.start()
    p = run(c, "sbatch", "--parsable", "--wrap", "trap '' TERM; sleep 30; sleep 30")
    a = int(p.stdout.split(";")[0])
    c.wait_job(a, "RUNNING")
    b = int(run(c, "sbatch", "--parsable", "-H", "--wrap", "true").stdout.split(";")[0])
    time.sleep(1)  # the script has set its trap
    run(c, "scancel", str(a), str(b))
    c.wait_for(lambda: run(c, "squeue", "-h", "-j", str(a), "-o", "%t").stdout == "CG\n",
               "job %d COMPLETING" % a)
    assert run(c, "squeue", "-h", "-t", "CA", "-o", "%i").stdout == "%d\n" % b
    assert run(c, "squeue", "-h", "-t", "CG", "-o", "%i").stdout == "%d\n" % a
    assert run(c, "squeue", "-h", "-t", "all", "-o", "%i %t").stdout == "%d CA\n%d CG\n" % (b, a)
    assert run(c, "squeue", "-h", "-s", "-o", "%i").stdout == "%d.batch\n" % a


def test_squeue_json(cluster):
    a = sleeper(cluster, "jj")
    cluster.wait_job(a, "RUNNING")
    doc = json.loads(run(cluster, "squeue", "--json").stdout)
    assert doc["errors"] == [] and doc["warnings"] == [] and "meta" in doc
    job = [j for j in doc["jobs"] if j["job_id"] == a][0]
    assert job["job_state"] == ["RUNNING"]
    assert job["name"] == "jj"
    assert job["time_limit"] == {"set": True, "infinite": True, "number": 0}
    assert job["node_count"]["number"] == 1


def test_sinfo_layouts_and_drain(cluster):
    out = run(cluster, "sinfo").stdout.splitlines()
    assert out == [SINFO_HEADER, "debug*       up   infinite      2   idle node[1-2]"]
    run(cluster, "scontrol", "update", "NodeName=node2", "State=DRAIN", "Reason=maint")
    cluster.wait_for(lambda: "DRAIN" in cluster.nodes()["node2"]["state"], "node2 drained")
    out = run(cluster, "sinfo").stdout.splitlines()
    assert out[1:] == ["debug*       up   infinite      1  drain node2",
                       "debug*       up   infinite      1   idle node1"]
    reasons = run(cluster, "sinfo", "-R").stdout.splitlines()
    assert reasons[0] == "REASON               USER      TIMESTAMP           NODELIST"
    assert re.match(r"^maint {16}%-9s \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d node2$" % cluster.user,
                    reasons[1]), reasons
    nodes = run(cluster, "sinfo", "-N").stdout.splitlines()
    assert nodes == ["NODELIST   NODES PARTITION STATE ", "node1          1    debug* idle  ",
                     "node2          1    debug* drain "]
    assert run(cluster, "sinfo", "-h", "-t", "drain", "-o", "%N").stdout == "node2\n"
    summary = run(cluster, "sinfo", "-s").stdout.splitlines()
    assert summary[1] == "debug*       up   infinite          0/1/1/2 node[1-2]"
    run(cluster, "scontrol", "update", "NodeName=node2", "State=RESUME")
    cluster.wait_nodes("IDLE")
    p = run(cluster, "scontrol", "update", "NodeName=node2", "State=DRAIN", rc=1)
    assert "You must specify a reason when DOWNING or DRAINING a node" in p.stderr


def test_scontrol_show_job_layout(cluster):
    a = sleeper(cluster, "shown", time_limit=10)
    cluster.wait_job(a, "RUNNING")
    text = run(cluster, "scontrol", "show", "job", str(a)).stdout
    lines = text.split("\n")
    assert lines[0] == "JobId=%d JobName=shown" % a
    assert lines[1] == "   UserId=%s(%d) GroupId=%s(%d) MCS_label=N/A" % (
        cluster.user, os.getuid(), cluster.group, os.getgid())
    assert lines[3] == "   JobState=RUNNING Reason=None Dependency=(null)"
    assert re.match(r"^   RunTime=00:00:\d\d TimeLimit=00:10:00 TimeMin=N/A$", lines[5])
    assert "   Power=" in lines and text.endswith("\n   \n\n")
    keys = re.findall(r"(\S+?)=", text)
    order = ["JobId", "JobName", "UserId", "Priority", "JobState", "Requeue", "RunTime",
             "SubmitTime", "StartTime", "Partition", "NodeList", "BatchHost", "NumNodes",
             "TRES", "MinCPUsNode", "Features", "Command", "WorkDir", "StdErr", "StdIn",
             "StdOut", "Power"]
    assert [k for k in keys if k in order] == order
    one = run(cluster, "scontrol", "-o", "show", "job", str(a)).stdout
    assert one.count("\n") == 1 and one.endswith("Power= \n")
    doc = json.loads(run(cluster, "scontrol", "--json", "show", "job", str(a)).stdout)
    assert doc["jobs"][0]["job_id"] == a and doc["jobs"][0]["job_state"] == ["RUNNING"]
    p = run(cluster, "scontrol", "show", "job", "99999", rc=1)
    assert p.stderr == "slurm_load_jobs error: Invalid job id specified\n"


def test_scontrol_nodes_partitions_ping(cluster):
    text = run(cluster, "scontrol", "show", "node", "node1").stdout
    assert text.startswith("NodeName=node1 ")
    assert "\n   State=IDLE ThreadsPerCore=1 " in text
    # loomd's uname, where and as slurmd 22.05's shows it; BootTime the host's
    u = os.uname()
    assert text.startswith("NodeName=node1 Arch=%s CoresPerSocket=" % u.machine), text
    assert "Version=22.05.8\n   OS=%s %s %s \n   RealMemory=" % (u.sysname, u.release,
                                                               u.version) in text, text
    with open("/proc/uptime") as f:
        boot = time.time() - float(f.read().split()[0])
    shown = re.search(r"\n   BootTime=(\S+) ", text).group(1)  # TZ=UTC
    assert abs(calendar.timegm(time.strptime(shown, "%Y-%m-%dT%H:%M:%S")) - boot) < 30, text
    assert "\n   Gres=gpu:tesla:2\n" in text
    doc = json.loads(run(cluster, "scontrol", "show", "nodes", "--json").stdout)
    names = {n["name"]: n for n in doc["nodes"]}
    assert names["node1"]["state"][0] == "IDLE" and names["node1"]["cpus"] == 4
    assert run(cluster, "scontrol", "show", "node", "nope", rc=1).stdout == "Node nope not found\n"
    part = run(cluster, "scontrol", "show", "partition", "debug").stdout
    assert part.startswith("PartitionName=debug\n   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n")
    assert "\n   State=UP TotalCPUs=8 TotalNodes=2 SelectTypeParameters=NONE\n" in part
    ping = run(cluster, "scontrol", "ping").stdout
    assert re.match(r"^Slurmctld\(primary\) at \S+ is UP\n$", ping)
    conf = run(cluster, "scontrol", "show", "config").stdout
    assert conf.startswith("Configuration data as of ")
    assert re.search(r"^ClusterName +\= loomtest$", conf, re.M)


def test_scontrol_update_hold_release(cluster):
    b = sleeper(cluster, "upd", hold=True)
    run(cluster, "scontrol", "update", "JobId=%d" % b, "TimeLimit=30", "Name=renamed")
    rec = cluster.job(b)
    assert rec["time_limit"] == 30 and rec["name"] == "renamed"
    p = run(cluster, "scontrol", "update", "JobId=%d" % b, "Bogus=1", rc=1)
    assert p.stderr == "Update of this parameter is not supported: Bogus=1\nRequest aborted\n"
    p = run(cluster, "scontrol", "update", "JobId=99999", "TimeLimit=5", rc=1)
    assert p.stderr == "Invalid job id specified for job 99999\n"
    run(cluster, "scontrol", "release", str(b))
    cluster.wait_job(b, "RUNNING")
    c = sleeper(cluster, "held", begin_time=int(time.time()) + 3600)
    run(cluster, "scontrol", "hold", str(c))
    assert run(cluster, "squeue", "-h", "-j", str(c), "-o", "%r").stdout in (
        "JobHeldAdmin\n", "JobHeldUser\n")
    p = run(cluster, "scontrol", "hold", "99999", rc=1)
    assert p.stderr.startswith("Invalid job id specified for job 99999\n")


def test_squeue_listing_follows_updates(cluster):
    """The controller keeps each job's record cut to squeue's field list
    (h_jobs.c; these letters are all in it): an update, a release and a start
    must show in the next listing, whichever field list asked last."""
    a = sleeper(cluster, "before", hold=True)
    fmt = ["-h", "-j", str(a), "-o", "%i %j %T %R %l"]
    assert run(cluster, "squeue", *fmt).stdout.startswith("%d before PENDING (JobHeldUser) " % a)
    run(cluster, "squeue", "-l")  # another field list in between
    run(cluster, "scontrol", "update", "JobId=%d" % a, "Name=after", "TimeLimit=30")
    assert run(cluster, "squeue", *fmt).stdout == "%d after PENDING (JobHeldUser) 30:00\n" % a
    run(cluster, "squeue")
    run(cluster, "scontrol", "release", str(a))
    cluster.wait_job(a, "RUNNING")
    out = run(cluster, "squeue", *fmt).stdout
    assert re.fullmatch(r"%d after RUNNING \S+ 30:00\n" % a, out), out
    assert run(cluster, "squeue", "-h", "-o", "%i %j").stdout.count("%d after\n" % a) == 1
    run(cluster, "scancel", str(a))


def test_node_last_busy_time(make_cluster):
    """LastBusyTime as slurmctld 22.05 keeps it (side by side): the node's
    registration, then the moment its last job left it; not while it runs."""
    cluster = make_cluster(nodes=1, cpus=2, gpus=0)

    def last_busy():
        text = run(cluster, "scontrol", "show", "node", "node1").stdout
        shown = re.search(r"\n   LastBusyTime=(\S+)\n", text).group(1)
        return calendar.timegm(time.strptime(shown, "%Y-%m-%dT%H:%M:%S"))
    registered = last_busy()
    assert registered <= time.time() + 1
    time.sleep(1.1)
    jid = sleeper(cluster, "busy", secs=2)
    cluster.wait_job(jid, "RUNNING")
    assert last_busy() == registered
    cluster.wait_job(jid, "COMPLETED")
    assert last_busy() > registered


def test_scontrol_update_relative_time_and_held_priority(cluster):
    """As scontrol 22.05.8 (side by side): TimeLimit=+N and -N move the job's
    own limit; a decrement below zero is refused with scontrol's words; a held
    job takes no priority until it is released."""
    j = sleeper(cluster, "rel", hold=True, time_limit=10)
    limit = lambda: re.search(r"TimeLimit=(\S+)",
                              run(cluster, "scontrol", "show", "job", str(j)).stdout).group(1)
    run(cluster, "scontrol", "update", "JobId=%d" % j, "TimeLimit=+5")
    assert limit() == "00:15:00"
    run(cluster, "scontrol", "update", "JobId=%d" % j, "TimeLimit=-3")
    assert limit() == "00:12:00"
    p = run(cluster, "scontrol", "update", "JobId=%d" % j, "TimeLimit=-100", rc=1)
    assert p.stderr == ("scontrol: error: TimeLimit decrement larger than current time limit "
                        "(100 > 12)\n"), p.stderr
    run(cluster, "scontrol", "update", "JobId=%d" % j, "TimeLimit=+1:00:00")
    assert limit() == "01:12:00"
    p = run(cluster, "scontrol", "update", "JobId=%d" % j, "Priority=100", rc=1)
    assert p.stderr == "Job is in held state, pending scheduler release for job %d\n" % j
    run(cluster, "scancel", str(j))
    # Contiguous of a pending job, shown by scontrol (it printed 0 always)
    c = sleeper(cluster, "contig", hold=True)
    run(cluster, "scontrol", "update", "JobId=%d" % c, "Contiguous=1")
    assert " Contiguous=1 " in run(cluster, "scontrol", "show", "job", str(c)).stdout
    run(cluster, "scancel", str(c))
    # StdOut (only: not StdErr, StdIn) of a pending job; the output goes there
    k = cluster.submit(script="#!/bin/sh\necho moved\n", name="out", hold=True)["job_id"]
    out = cluster.root / "moved_%j.out"
    run(cluster, "scontrol", "update", "JobId=%d" % k, "StdOut=%s" % out)
    p = run(cluster, "scontrol", "update", "JobId=%d" % k, "StdErr=/tmp/e", rc=1)
    assert p.stderr == "Update of this parameter is not supported: StdErr=/tmp/e\nRequest aborted\n"
    run(cluster, "scontrol", "release", str(k))
    cluster.wait_job(k, "COMPLETED")
    assert (cluster.root / ("moved_%d.out" % k)).read_text() == "moved\n"


def test_deadline_reboot_oversubscribe_and_layout_as_slurm(cluster):
    """As slurmctld/scontrol/squeue 22.05.8 (side by side): --deadline,
    --reboot, --oversubscribe and the layout options are shown; MinCPUsNode,
    Deadline, OverSubscribe and Reboot of a pending job can be updated (a
    running job takes Deadline and leaves it, refuses the others); a
    --deadline job without --time starts with its limit cut to end by it."""
    def show(j):
        return run(cluster, "scontrol", "show", "job", str(j)).stdout

    j = int(run(cluster, "sbatch", "--parsable", "-H", "-n2", "--ntasks-per-node=2",
                "--ntasks-per-core=1", "--ntasks-per-socket=2",
                "--deadline=2030-01-01T00:00:00", "--reboot", "--wrap", "true").stdout)
    out = show(j)
    for want in (" Reboot=1 ", "TimeMin=00:01:00", " Deadline=2030-01-01T00:00:00",
                 "ReqB:S:C:T=0:0:*:*", "Socks/Node=* NtasksPerN:B:S:C=2:0:2:1 ",
                 "OverSubscribe=NO "):
        assert want in out, (want, out)
    k = int(run(cluster, "sbatch", "--parsable", "-H", "--sockets-per-node=1",
                "--cores-per-socket=2", "--threads-per-core=1", "--oversubscribe",
                "--wrap", "true").stdout)
    out = show(k)
    for want in ("ReqB:S:C:T=0:0:2:1", "Socks/Node=1 NtasksPerN:B:S:C=0:0:*:* ",
                 "OverSubscribe=YES ", "TimeMin=N/A"):
        assert want in out, (want, out)
    p = run(cluster, "squeue", "-h", "-j", "%d,%d" % (j, k), "-O",
            "JobID:4,NTPerNode:4,NTPerCore:4,NTPerSocket:4,Deadline,Reboot:2,SCT:6,"
            "OverSubscribe:4,BatchFlag:2,Profile:7,SiblingsViableRaw:3")
    assert p.stdout.splitlines() == [
        "%-4d0   N/A N/A N/A                 0 1:2:1 YES 1 NotSet NA " % k,
        "%-4d2   1   2   2030-01-01T00:00:00 1 *:*:* NO  1 NotSet NA " % j], p.stdout
    # updates of a pending job
    h = sleeper(cluster, "upd", hold=True)
    for kv in ("MinCPUsNode=2", "Deadline=2030-01-01T00:00:00", "OverSubscribe=yes",
               "Reboot=yes"):
        run(cluster, "scontrol", "update", "JobId=%d" % h, kv)
    out = show(h)
    for want in (" Reboot=1 ", " Deadline=2030-01-01T00:00:00", " NumCPUs=2 ",
                 "MinCPUsNode=2 ", "OverSubscribe=YES "):
        assert want in out, (want, out)
    run(cluster, "scontrol", "update", "JobId=%d" % h, "OverSubscribe=no", "Reboot=no")
    out = show(h)
    assert " Reboot=0 " in out and "OverSubscribe=NO " in out, out
    p = run(cluster, "scontrol", "update", "JobId=%d" % h, "Deadline=2020-01-01", rc=1)
    assert p.stderr == "Invalid time specified for job %d\n" % h, p.stderr
    p = run(cluster, "scontrol", "update", "JobId=%d" % h, "Reboot=maybe", rc=1)
    assert p.stderr == "scontrol: error: Invalid reboot value: maybe\n", p.stderr
    run(cluster, "scancel", "%d" % j, "%d" % k, "%d" % h)
    # a running job, and the limit cut to the deadline
    r = int(run(cluster, "sbatch", "--parsable", "--deadline=now+10minutes",
                "--wrap", "sleep 60").stdout)
    cluster.wait_job(r, "RUNNING")
    limit = re.search(r"TimeLimit=(\S+)", show(r)).group(1)
    assert limit in ("00:09:00", "00:10:00"), limit
    before = re.search(r"Deadline=(\S+)", show(r)).group(1)
    run(cluster, "scontrol", "update", "JobId=%d" % r, "Deadline=2031-01-01T00:00:00")
    assert re.search(r"Deadline=(\S+)", show(r)).group(1) == before != "N/A"
    p = run(cluster, "scontrol", "update", "JobId=%d" % r, "Reboot=yes", rc=1)
    assert p.stderr == "Job is no longer pending execution for job %d\n" % r, p.stderr
    run(cluster, "scancel", str(r))


def test_pending_node_estimate_as_slurm(cluster):
    """A pending job that asked only for tasks shows the nodes its CPUs need on
    the partition's largest node, at most one a task, as squeue/scontrol
    22.05.8 (side by side on 2-CPU nodes: -n 3 -> 2, -n 5 -> 3, -n 2 -c 2 -> 2,
    -c 3 -> 1). The cluster's nodes have 4 CPUs."""
    want = {("-n", "5"): "2", ("-n", "9"): "3", ("-n", "2", "-c", "3"): "2",
            ("-c", "3"): "1", ("-n", "4"): "1", ("-N", "2", "-n", "2"): "2"}
    ids = {}
    for args in want:
        ids[args] = run(cluster, "sbatch", "--parsable", "-H", *args, "--wrap", "true").stdout.strip()
    for args, nodes in want.items():
        p = run(cluster, "squeue", "-h", "-j", ids[args], "-o", "%D")
        assert p.stdout.strip() == nodes, (args, p.stdout)
    assert " NumNodes=3 " in run(cluster, "scontrol", "show", "job", ids[("-n", "9")]).stdout
    run(cluster, "scancel", *ids.values())


def test_scontrol_admin_commands_as_slurm(cluster):
    """setdebug, setdebugflags, schedloglevel, wait_job and show daemons with
    scontrol 22.05.8's words and exit statuses (side by side); the level
    really changes the controller's log and show config shows both."""
    log = cluster.logdir / "loomctld.log"

    def started(jid):
        return ("job %d started on" % jid) in log.read_text()
    a = sleeper(cluster, "quiet", secs=1)
    cluster.wait_job(a, "COMPLETED")
    assert not started(a)  # a verbose line: not at SlurmctldDebug=info
    run(cluster, "scontrol", "setdebug", "4")  # verbose, by number
    b = sleeper(cluster, "loud", secs=1)
    cluster.wait_job(b, "COMPLETED")
    assert started(b)
    conf = run(cluster, "scontrol", "show", "config").stdout
    assert re.search(r"^SlurmctldDebug\s+= verbose$", conf, re.M), conf
    run(cluster, "scontrol", "setdebug", "info")
    run(cluster, "scontrol", "setdebugflags", "+protocol")
    run(cluster, "scontrol", "setdebugflags", "+Backfill")
    conf = run(cluster, "scontrol", "show", "config").stdout
    assert re.search(r"^DebugFlags\s+= Backfill,Protocol$", conf, re.M), conf
    run(cluster, "scontrol", "setdebugflags", "-Backfill")
    run(cluster, "scontrol", "setdebugflags", "-Protocol")
    for args, msg in ((["setdebug", "loud"], "invalid debug level: loud\n"),
                      (["setdebugflags", "Backfill"],
                       "invalid debug flag: Backfill\nUsage: setdebugflags [+|-]NAME\n"),
                      (["setdebugflags", "+Nope"], "scontrol: error: Invalid DebugFlag: Nope\n"
                                                   "invalid debug flag: +Nope\n"),
                      (["schedloglevel", "1"], "slurm_set_schedlog_level error: Requested "
                                               "operation is presently disabled\n"),
                      (["wait_job", "99999"], "scontrol: Problem running job 99999\n"),
                      (["wait_job", str(b)], "scontrol: Job %d no longer running\n" % b)):
        assert scontrol_err(cluster, *args) == msg, args
    r = sleeper(cluster, "ready")
    cluster.wait_job(r, "RUNNING")
    assert scontrol_err(cluster, "wait_job", str(r), rc=0) == (
        "scontrol: Nodes are ready for job %d\n" % r)
    run(cluster, "scancel", str(r))
    # SlurmctldHost=localhost and NodeHostname=localhost: both daemons are "here";
    # no NodeHostname is this host's own name, so there are no aliases
    assert run(cluster, "scontrol", "show", "daemons").stdout == "slurmctld slurmd\n"
    assert run(cluster, "scontrol", "show", "aliases").stdout == ""


def test_time_format_and_env_filters(cluster):
    """SLURM_TIME_FORMAT (relative, a strftime format) reaches every date the
    commands print; SQUEUE_NAMES and SQUEUE_QOS filter as -n and -q (22.05.8
    side by side)."""
    j = int(run(cluster, "sbatch", "--parsable", "-H", "-J", "envname", "--begin=now+3days",
                "--wrap", "true").stdout)
    begin = cluster.job(j)["start_time"]  # a held job's expected start: its begin time
    day = time.strftime("%a %H:%M", time.localtime(begin))
    p = run(cluster, "squeue", "-h", "-j", str(j), "-o", "%S", env={"SLURM_TIME_FORMAT": "relative"})
    assert p.stdout == day + "\n", p.stdout
    p = run(cluster, "scontrol", "show", "job", str(j), env={"SLURM_TIME_FORMAT": "%s"})
    assert " StartTime=%d " % begin in p.stdout, p.stdout
    p = run(cluster, "squeue", "-h", "-o", "%i", env={"SQUEUE_NAMES": "envname"})
    assert p.stdout == "%d\n" % j, p.stdout
    p = run(cluster, "squeue", "-h", "-o", "%i", env={"SQUEUE_QOS": "nosuch"})
    assert p.stdout == "", p.stdout
    run(cluster, "scancel", str(j))


def test_node_update_attributes(make_cluster):
    """scontrol update NodeName= Weight, Features, ActiveFeatures, Comment and
    Extra take effect (they were accepted and dropped): shown by scontrol and
    sinfo as 22.05.8 shows them, -C matches the new features, a lower weight
    is preferred, a restarted controller keeps them; ActiveFeatures outside
    the available ones is refused with slurmctld's words."""
    c = make_cluster(nodes=2, cpus=2, gpus=0)
    c.run("scontrol", "update", "NodeName=node2", "Weight=1", "Features=fast,big",
          "Comment=hello", "Extra=xx", check=True)
    c.run("scontrol", "update", "NodeName=node1", "Weight=9", check=True)
    p = c.run("scontrol", "update", "NodeName=node2", "ActiveFeatures=nope")
    assert (p.returncode, p.stderr) == (1, "slurm_update error: Active features not subset of "
                                           "available features\n"), p.stderr
    c.run("scontrol", "update", "NodeName=node2", "ActiveFeatures=fast", check=True)

    def check():
        out = c.run("scontrol", "show", "node", "node2", check=True).stdout
        for want in ("AvailableFeatures=fast,big\n", "ActiveFeatures=fast\n", " Weight=1 ",
                     "\n   Comment=hello\n   Extra=xx\n"):
            assert want in out, (want, out)
        p = c.run("sinfo", "-h", "-N", "-o", "%N %f %b %w", check=True)
        assert p.stdout.splitlines() == ["node1 (null) (null) 9", "node2 fast,big fast 1"], p.stdout
    check()
    j = c.submit("#!/bin/sh\ntrue\n", constraint="big")["job_id"]
    assert c.wait_job(j, "COMPLETED")["nodes"] == "node2"
    k = c.submit("#!/bin/sh\ntrue\n")["job_id"]  # the lower weight first
    assert c.wait_job(k, "COMPLETED")["nodes"] == "node2"
    c.kill_ctld(signal.SIGKILL)
    c.start_ctld()
    check()
    c.run("scontrol", "update", "NodeName=node2", "Comment=", "Features=", check=True)
    out = c.run("scontrol", "show", "node", "node2", check=True).stdout
    assert "AvailableFeatures=(null)" in out and "Comment=" not in out, out
    c.run("scontrol", "reconfigure", check=True)  # slurm.conf's weight again, as 22.05
    assert " Weight=1 " in c.run("scontrol", "show", "node", "node1", check=True).stdout


def test_partition_update(make_cluster):
    """scontrol update PartitionName= (part.update was not served at all): the
    changes show in scontrol and sinfo as 22.05.8 shows them side by side,
    State=DOWN holds new jobs (PartitionDown), a restart keeps the changes, a
    reconfigure reads slurm.conf again; bad input gets scontrol's words."""
    c = make_cluster(nodes=1, cpus=2, gpus=0)
    for kv in ("MaxTime=30", "DefaultTime=10", "PriorityTier=2", "OverSubscribe=YES",
               "ExclusiveUser=YES", "State=DOWN"):
        c.run("scontrol", "update", "PartitionName=debug", kv, check=True)

    def check():
        out = c.run("scontrol", "show", "partition", "debug", check=True).stdout
        for want in (" DefaultTime=00:10:00 ", " ExclusiveUser=YES ", " MaxTime=00:30:00 ",
                     " PriorityTier=2 ", " OverSubscribe=YES:4\n", "   State=DOWN "):
            assert want in out, (want, out)
        assert c.run("sinfo", "-h", "-o", "%a %l", check=True).stdout == "down 30:00\n"
    check()
    j = c.submit("#!/bin/sh\ntrue\n")["job_id"]
    c.wait_for(lambda: c.job(j)["reason"] == "PartitionDown", "PartitionDown")
    c.kill_ctld(signal.SIGKILL)
    c.start_ctld()
    check()
    for args, msg in ((["Bogus=1"], "scontrol: error: Update of this parameter is not supported: "
                                     "Bogus=1\n\nscontrol: error: Request aborted\n"),
                      (["MaxTime=soon"], "scontrol: error: Invalid input MaxTime=soon\n"),
                      (["State=gone"], "scontrol: error: Invalid input: State=gone\nscontrol: "
                                       "error: Acceptable State values are UP, DOWN, DRAIN and "
                                       "INACTIVE\n")):
        p = c.run("scontrol", "update", "PartitionName=debug", *args)
        assert (p.returncode, p.stderr) == (1, msg + "slurm_update error: No error\n"), p.stderr
    p = c.run("scontrol", "update", "PartitionName=nosuch", "MaxTime=5")
    assert p.stderr == "slurm_update error: Invalid partition name specified\n", p.stderr
    c.run("scontrol", "update", "PartitionName=debug", "State=UP", check=True)
    c.wait_job(j, "COMPLETED")
    c.run("scontrol", "reconfigure", check=True)
    out = c.run("scontrol", "show", "partition", "debug", check=True).stdout
    assert " MaxTime=UNLIMITED " in out and " PriorityTier=1 " in out, out


def test_admin_comment_tmp_and_node_sizes(cluster):
    """As slurmctld 22.05.8 side by side: AdminComment (administrators) and
    MinTmpDiskNode updates are shown; --tmp or --mem beyond every node's
    TmpDisk or RealMemory is refused at submission (CR_Core too), except for a
    held job, whose node fit is not tested until its release."""
    j = int(run(cluster, "sbatch", "--parsable", "-H", "--comment=cmt", "--wrap", "true").stdout)
    run(cluster, "scontrol", "update", "JobId=%d" % j, "AdminComment=JS1:abc",
        "MinTmpDiskNode=200")
    out = run(cluster, "scontrol", "show", "job", str(j)).stdout
    assert " MinTmpDiskNode=200M\n" in out, out
    assert "\n   AdminComment=JS1:abc \n   Comment=cmt \n" in out, out
    assert run(cluster, "squeue", "-h", "-j", str(j), "-o", "%d").stdout == "200M\n"
    run(cluster, "scancel", str(j))
    for args, why in ((["--tmp=100"], "Temporary disk"), (["--mem=100G"], "Memory")):
        p = run(cluster, "sbatch", *args, "--wrap", "true", rc=1)
        assert p.stderr == ("sbatch: error: %s specification can not be satisfied\n"
                            "sbatch: error: Batch job submission failed: Requested node "
                            "configuration is not available\n" % why), p.stderr
        k = int(run(cluster, "sbatch", "--parsable", "-H", *args, "--wrap", "true").stdout)
        run(cluster, "scancel", str(k))


@pytest.mark.skipif(os.getuid() != 0, reason="runs commands as nobody, which needs root")
def test_user_update_rules_as_slurm(cluster):
    """What a user may change on their own job, as slurmctld 22.05.8 answers
    side by side: raise a pending job's time limit, not set its priority (a
    raise is 'Access/permission denied', a cut is not persistent)."""
    def as_nobody(line):
        return subprocess.run(["runuser", "-u", "nobody", "--", "sh", "-c", line],
                              env=dict(cluster.env, HOME="/"), cwd="/tmp", capture_output=True,
                              text=True, timeout=60)
    p = as_nobody("%s/sbatch --parsable -H -t 10 --begin=now+1hour -o /dev/null --wrap true" % BIN)
    assert p.returncode == 0, p.stderr
    j = int(p.stdout)
    p = as_nobody("%s/scontrol update JobId=%d TimeLimit=20" % (BIN, j))
    assert p.returncode == 0, p.stderr
    assert cluster.job(j)["time_limit"] == 20
    p = as_nobody("%s/scontrol update JobId=%d Priority=100" % (BIN, j))
    assert p.stderr == "Job is in held state, pending scheduler release for job %d\n" % j
    as_nobody("%s/scontrol release %d" % (BIN, j))
    p = as_nobody("%s/scontrol update JobId=%d Priority=1" % (BIN, j))
    assert (p.returncode, p.stderr) == (1, "Changes to job priority are not persistent, change "
                                           "nice instead for job %d\n" % j), p.stderr
    higher = cluster.job(j)["priority"] + 1
    p = as_nobody("%s/scontrol update JobId=%d Priority=%d" % (BIN, j, higher))
    assert p.stderr == "Access/permission denied for job %d\n" % j, p.stderr
    run(cluster, "scancel", str(j))
    # another user's job, and the administrators' commands
    r = sleeper(cluster, "roots", hold=True)
    for cmd, want in (("hold %d" % r, "Invalid user id for job %d\nslurm_suspend error: Invalid "
                                      "user id\n" % r),
                      ("update JobId=%d TimeLimit=5" % r, "Invalid user id for job %d\n" % r),
                      ("requeue %d" % r, "Access/permission denied for job %d\n" % r),
                      ("reconfigure", "slurm_reconfigure error: Invalid user id\n"),
                      ("update NodeName=node1 State=DRAIN Reason=x",
                       "slurm_update error: Invalid user id\n")):
        p = as_nobody("%s/scontrol %s" % (BIN, cmd))
        assert (p.returncode, p.stderr) == (1, want), (cmd, p.stderr)
    run(cluster, "scancel", str(r))


def test_squeue_held_jobs_newest_first(make_cluster):
    """Held jobs tie on every default sort key (priority 0): squeue 22.05.8
    lists them newest first (side by side), after the other pending jobs."""
    cluster = make_cluster(nodes=1, cpus=2, gpus=0)
    held = [sleeper(cluster, "h%d" % i, hold=True) for i in range(3)]
    waiting = sleeper(cluster, "w", begin_time=int(time.time()) + 3600)
    out = run(cluster, "squeue", "-h", "-o", "%i").stdout.split()
    assert out == [str(waiting)] + [str(j) for j in reversed(held)], out


def test_scontrol_hostlists_need_no_controller(tmp_path):
    # A configuration that points nowhere: these subcommands must not care.
    from conftest import BIN, need
    import subprocess
    need("scontrol")
    env = dict(os.environ, SLURM_CONF=str(tmp_path / "missing.conf"))
    run_ = lambda *a: subprocess.run([str(BIN / "scontrol")] + list(a), capture_output=True,
                                     text=True, env=env)
    assert run_("show", "hostnames", "n[1-3],a").stdout == "n1\nn2\nn3\na\n"
    assert run_("show", "hostlist", "n3,n1,n2").stdout == "n[3,1-2]\n"
    assert run_("show", "hostlistsorted", "n3,n1,n2").stdout == "n[1-3]\n"
    assert run_("version").stdout == "slurm 22.05.8\n"
    p = run_("ping")
    assert p.returncode == 1


def test_scancel_ids_filters_and_exit_codes(cluster):
    a = sleeper(cluster, "victim")
    cluster.wait_job(a, "RUNNING")
    run(cluster, "scancel", str(a))
    cluster.wait_job(a, "CANCELLED")
    # an already finished job is not an error with the default SIGKILL
    assert run(cluster, "scancel", str(a)).stderr == ""
    # so is an unknown one (scancel 22.05.8), except with a signal or -b
    assert run(cluster, "scancel", "99999").stderr == ""
    p = run(cluster, "scancel", "-v", "99999")
    assert "scancel: error: Kill job error on job id 99999: Invalid job id specified\n" in p.stderr
    p = run(cluster, "scancel", "-s", "USR1", "99999", rc=1)
    assert p.stderr == "scancel: error: Kill job error on job id 99999: Invalid job id specified\n"
    p = run(cluster, "scancel", "abc", rc=1)
    assert p.stderr == "scancel: error: Invalid job id abc\n"
    p = run(cluster, "scancel", rc=1)
    assert p.stderr == "scancel: error: No job identification provided\n"
    # filters combine with AND
    held = sleeper(cluster, "keep", hold=True)
    gone = sleeper(cluster, "drop", hold=True)
    run(cluster, "scancel", "-t", "PENDING", "-n", "drop")
    cluster.wait_job(gone, "CANCELLED")
    assert cluster.state_of(cluster.job(held)) == "PENDING"
    p = run(cluster, "scancel", "-v", "-u", cluster.user, "-n", "nomatch")
    assert "No active jobs match ALL job filters" in p.stderr
    # a signal, not a cancel
    s = sleeper(cluster, "signalled")
    cluster.wait_job(s, "RUNNING")
    p = run(cluster, "scancel", "-v", "-s", "USR1", str(s))
    assert p.stderr == "scancel: Signal 10 to job %d\n" % s
    p = run(cluster, "scancel", "-s", "BOGUS", str(s), rc=1)
    assert p.stderr == "Unknown job signal: BOGUS\n"
    run(cluster, "scancel", "-u", cluster.user)
    cluster.wait_job(held, "CANCELLED")


# sinfo texts compared side by side with sinfo 22.05.8 on the same slurm.conf.
SINFO_ALL_HEADER = (
    "AVAIL|ACTIVE_FEATURES|CPUS|TMP_DISK|FREE_MEM|AVAIL_FEATURES|GROUPS|OVERSUBSCRIBE|TIMELIMIT|"
    "MEMORY|HOSTNAMES|NODE_ADDR|PRIO_TIER|ROOT|JOB_SIZE|STATE|USER|VERSION|WEIGHT|S:C:T|"
    "NODES(A/I) |MAX_CPUS_PER_NODE |CPUS(A/I/O/T) |NODES |REASON |NODES(A/I/O/T) |GRES |"
    "TIMESTAMP |PRIO_JOB_FACTOR |DEFAULTTIME |PREEMPT_MODE |NODELIST |CPU_LOAD |PARTITION |"
    "PARTITION |ALLOCNODES |STATE |USER |CLUSTER |SOCKETS |CORES |THREADS ")


def test_sinfo_fields_and_options_as_slurm(cluster):
    p = run(cluster, "sinfo", "-h", "-o", "%B|%V|%I|%S|%R|%p")
    assert p.stdout == "UNLIMITED|N/A|1|all|debug|1\n"
    # -T/--reservation: none exist (22.05.8's words); scontrol's -F, --uid, --federation
    for opt in ("-T", "--reservation"):
        assert run(cluster, "sinfo", opt).stdout == "No reservations in the system\n"
    p = run(cluster, "scontrol", "-F", "--uid=%d" % os.getuid(), "--federation", "show",
            "partition")
    assert p.stdout.startswith("PartitionName=debug\n"), p.stdout
    p = run(cluster, "sinfo", "-O", "Cluster,AllocNodes:12,MaxCPUsPerNode,Comment:8,Extra:6")
    assert p.stdout.splitlines() == [
        "CLUSTER             ALLOCNODES  MAX_CPUS_PER_NODE   COMMENT EXTRA ",
        "N/A                 all         UNLIMITED           (null)  (null)"]
    for spec in (["-o", "%all"], ["-O", "all"]):
        out = run(cluster, "sinfo", *spec).stdout.splitlines()
        assert out[0] == SINFO_ALL_HEADER and len(out) == 2
        assert out[1].startswith("up|(null)|4|0|") and out[1].endswith("|debug* |debug |all "
                                                                       "|idle |Unknown |N/A |4 "
                                                                       "|1 |1 ")
    # -O reports a bad name as a "job" format error and goes on
    p = run(cluster, "sinfo", "-O", "bogus,Partition:8")
    assert p.stderr == "sinfo: error: Invalid job format specification: bogus\n"
    assert p.stdout == "PARTITIO\ndebug*  \n"
    # -o and -O share one string: the last wins, read as -O once -O was given
    assert run(cluster, "sinfo", "-o", "%D", "-O", "Nodes:4").stdout == "NODE\n2   \n"
    # -s wins over -N (one summary row per node) and over -R
    out = run(cluster, "sinfo", "-s", "-N").stdout.splitlines()
    assert out == ["PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST",
                   "debug*       up   infinite          0/1/0/1 node1",
                   "debug*       up   infinite          0/1/0/1 node2"]
    # a node list that does not parse is one name that matches nothing (no error)
    assert run(cluster, "sinfo", "-h", "-n", "node[").stdout == (
        "debug*       up   infinite      0    n/a \n")
    assert run(cluster, "sinfo", "-R", "-s").stdout.splitlines() == [
        "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST",
        "debug*       up   infinite          0/0/0/0 "]
    assert run(cluster, "sinfo", "--usage").stdout == (
        "Usage: sinfo [-abdelNRrsTv] [-i seconds] [-t states] [-p partition] [-n nodes]\n"
        "             [-S fields] [-o format] [-O Format] [--federation] [--local]\n")


def scontrol_err(cluster, *args, rc=1):
    p = run(cluster, "scontrol", *args, rc=rc)
    return p.stderr


def test_scontrol_messages_as_slurm(cluster):
    """scontrol's words and exit codes for bad input, as scontrol 22.05.8 prints them."""
    held = sleeper(cluster, "held", hold=True)
    done = cluster.submit(script="#!/bin/sh\ntrue\n", name="done")["job_id"]
    cluster.wait_job(done, "COMPLETED")
    upd = ["update", "JobId=%d" % held]
    cases = [
        (["TimeLimit=abc"], "scontrol: error: Invalid TimeLimit value\n", 1),
        (["Priority=abc"], "scontrol: error: Invalid Priority value: abc\n", 1),
        (["MinMemoryNode=abc"], "scontrol: error: Invalid MinMemoryNode value: abc\n", 1),
        (["Requeue=abc"], "scontrol: error: Invalid Requeue value: abc\n", 1),
        (["Shared=abc"], "scontrol: error: Invalid OverSubscribe value: abc\n", 1),
        (["NumCPUs=abc"], "scontrol: error: Invalid numeric value \"abc\" for NumCPUs.\n"
                          "scontrol: error: Invalid NumCPUs value: abc\n", 1),
        (["NumNodes=abc"],
         "scontrol: error: Invalid numeric value \"abc\" for requested node count.\n", 0),
        (["StartTime=bogus"], "Invalid time specification (pos=0): bogus\nNo changes specified\n",
         1),
        (["MailType=bogus"], "Invalid MailType: bogus\n", 1),
        (["Partition=nope"], "Invalid partition name specified for job %d\n" % held, 1),
        (["Partition=debug,nope"], "Invalid partition name specified for job %d\n" % held, 1),
        (["Reservation=nope"], "Requested reservation is invalid for job %d\n" % held, 1),
    ]
    for words, text, rc in cases:
        assert scontrol_err(cluster, *(upd + words), rc=rc) == text, words
    assert cluster.job(held)["partition"] == "debug"
    assert scontrol_err(cluster, "update", "Bogus=1") == (
        "No valid entity in update command\nInput line must include \"NodeName\", "
        "\"PartitionName\", \"Reservation\", \"JobId\", or \"SlurmctldDebug\"\n")
    assert scontrol_err(cluster, "update", "JobId=%d" % done, "TimeLimit=5") == (
        "Job has already finished for job %d\n" % done)
    # hold/release: one request per word, each failure with its slurm_suspend line
    assert scontrol_err(cluster, "hold", str(done)) == (
        "Job has already finished for job %d\nslurm_suspend error: Job has already finished\n"
        % done)
    assert scontrol_err(cluster, "hold", "abc", "99999") == (
        "Invalid job id specified for job abc\nslurm_suspend error: Invalid job id specified\n"
        "Invalid job id specified for job 99999\nslurm_suspend error: Invalid job id specified\n")
    assert scontrol_err(cluster, "release", "99999,99998") == (
        "Invalid job id specified for job 99999\nInvalid job id specified for job 99998\n"
        "slurm_suspend error: Invalid job id specified\n")
    assert scontrol_err(cluster, "hold") == "too few arguments for keyword:hold\n"
    assert scontrol_err(cluster, "requeue") == "too few arguments for keyword:requeue\n"
    assert scontrol_err(cluster, "requeue", str(held)) == (
        "Job is pending execution for job %d\n" % held)
    running = sleeper(cluster, "run", ntasks=2)
    cluster.wait_job(running, "RUNNING")
    assert scontrol_err(cluster, "hold", str(running), rc=0) == ""  # quietly, as 22.05
    assert scontrol_err(cluster, "release", str(running), rc=0) == ""
    text = run(cluster, "scontrol", "show", "job", str(running)).stdout
    assert "   MinCPUsNode=1 " in text and " NumCPUs=2 NumTasks=2 " in text
    # show job: one job or task only
    p = run(cluster, "scontrol", "show", "job", "%d_9" % held, rc=1)
    assert p.stdout == "Job %d_9 not found\n" % held and p.stderr == ""
    for arg in ("%d,%d" % (held, done), "%d.0" % held, "%d_[1-2]" % held):
        assert scontrol_err(cluster, "show", "job", arg) == (
            "scontrol_print_job error: Invalid job id specified\n")
    assert scontrol_err(cluster, "show", "job", "1", "2") == (
        "too many arguments for keyword:show\n")
    # entities Loom has none of, in 22.05.8's words
    p = run(cluster, "scontrol", "show", "licenses")
    assert p.stdout == "No licenses configured in Slurm.\n"
    assert run(cluster, "scontrol", "show", "res", "x", rc=1).stdout == "Reservation x not found\n"
    p = run(cluster, "scontrol", "show", "topology")
    assert p.stdout == "" and p.stderr == "scontrol: error: No topology information available\n"
    # scancel -Q: the error only in the exit code
    assert run(cluster, "scancel", "-Q", "-s", "USR1", "99999", rc=1).stderr == ""


def test_scontrol_config_node_and_accrue_as_slurm(cluster):
    conf = run(cluster, "scontrol", "show", "config").stdout.splitlines()
    keys = [l.split(" = ")[0].rstrip() for l in conf if " = " in l]
    # scontrol 22.05.8's order and words (Debian's build prints MULTIPLE_SLURMD)
    assert keys[keys.index("GroupUpdateTime") + 1] == "HASH_VAL"
    assert keys[keys.index("MpiParams") + 1] == "MULTIPLE_SLURMD"
    at = keys.index("SlurmctldPlugstack")
    assert keys[at + 1:at + 3] == ["SLURM_CONF", "SLURM_VERSION"]
    assert "SlurmUser               = %s(%d)" % (cluster.user, os.getuid()) in conf
    assert "TaskPluginParam         = (null type)" in conf
    assert "MaxNodeCount            = 2" in conf
    # a node on its own port: "Port=N Version=V", one blank
    text = run(cluster, "scontrol", "show", "node", "node1").stdout
    assert re.search(r"\n   NodeAddr=127\.0\.0\.1 NodeHostName=localhost Port=\d+ "
                     r"Version=22\.05\.8\n", text), text
    a = sleeper(cluster, "accr")
    cluster.wait_job(a, "RUNNING")
    text = run(cluster, "scontrol", "show", "job", str(a)).stdout
    sub = re.search(r"SubmitTime=(\S+) EligibleTime=(\S+)", text)
    assert sub.group(1) == sub.group(2)
    assert "\n   AccrueTime=%s\n" % sub.group(1) in text
    held = sleeper(cluster, "accr2", hold=True)
    assert "\n   AccrueTime=Unknown\n" in run(cluster, "scontrol", "show", "job", str(held)).stdout


def test_sinfo_drain_states_as_slurm(cluster):
    a = sleeper(cluster, "busy", ntasks=1)
    cluster.wait_job(a, "RUNNING")
    node = cluster.job(a)["nodes"]
    other = "node2" if node == "node1" else "node1"
    run(cluster, "scontrol", "update", "NodeName=%s" % node, "State=DRAIN", "Reason=x")
    run(cluster, "scontrol", "update", "NodeName=%s" % other, "State=DRAIN", "Reason=y")
    cluster.wait_for(lambda: all("DRAIN" in n["state"] for n in cluster.nodes().values()),
                     "both drained")
    q = lambda t: run(cluster, "sinfo", "-h", "-t", t, "-o", "%N %t %F").stdout
    # sinfo 22.05.8: a draining node (jobs on it) counts as allocated, matches -t alloc,
    # drain, draining, drng but not mix or drained; an idle drained node idle, drain, drained
    for t in ("alloc", "draining", "drng"):
        assert q(t) == "%s drng 1/0/0/1\n" % node, t
    for t in ("drained", "idle"):
        assert q(t) == "%s drain 0/0/1/1\n" % other, t
    assert q("mix") == ""
    assert sorted(q("drain").splitlines()) == sorted(["%s drng 1/0/0/1" % node,
                                                      "%s drain 0/0/1/1" % other])
    # -O StateComplete: every flag, in lower case
    p = run(cluster, "sinfo", "-h", "-N", "-O", "NodeList:6,StateComplete")
    assert sorted(p.stdout.split("\n")[:-1]) == sorted(
        ["%-6smixed+drain         " % node, "%-6sidle+drain          " % other]), p.stdout


def test_scontrol_suspend_resume(cluster):
    ticks = cluster.work / "ticks"
    a = cluster.submit(script="#!/bin/sh\nwhile :; do echo x >> %s; sleep 0.2; done\n" % ticks,
                       name="susp")["job_id"]
    cluster.wait_job(a, "RUNNING")
    cluster.wait_for(lambda: ticks.exists() and ticks.stat().st_size > 0, "the job ticks")
    run(cluster, "scontrol", "suspend", str(a))
    cluster.wait_job(a, "SUSPENDED")
    assert run(cluster, "squeue", "-h", "-j", str(a), "-o", "%t").stdout == "S\n"
    assert "JobState=SUSPENDED" in run(cluster, "scontrol", "show", "job", str(a)).stdout

    def stopped():
        size = ticks.stat().st_size
        time.sleep(1)
        return ticks.stat().st_size == size
    cluster.wait_for(stopped, "the suspended job to stop ticking")
    # scontrol 22.05.8's words for the wrong state and an unknown job
    assert scontrol_err(cluster, "suspend", str(a)) == (
        "Job is current suspended, requested operation disabled for job %d\n" % a)
    assert scontrol_err(cluster, "suspend", "99999") == (
        "Unexpected message received for job 99999\n")
    assert scontrol_err(cluster, "suspend") == "too few arguments for keyword:suspend\n"
    run(cluster, "scontrol", "resume", str(a))
    cluster.wait_job(a, "RUNNING")
    size = ticks.stat().st_size
    cluster.wait_for(lambda: ticks.stat().st_size > size, "the resumed job to tick again")
    assert scontrol_err(cluster, "resume", str(a)) == "Job is not suspended for job %d\n" % a
    held = sleeper(cluster, "h", hold=True)
    assert scontrol_err(cluster, "suspend", str(held)) == (
        "Job is pending execution for job %d\n" % held)
    # a suspended job can be cancelled (SIGKILL ends stopped tasks)
    run(cluster, "scontrol", "suspend", str(a))
    cluster.wait_job(a, "SUSPENDED")
    run(cluster, "scancel", str(a))
    cluster.wait_job(a, "CANCELLED")


def test_held_job_takes_its_priority_when_released(cluster):
    """priority/basic as slurmctld 22.05.8: a job held at submission does not use up a
    priority number; it gets the next one when released (checked side by side)."""
    prio = lambda j: int(run(cluster, "squeue", "-h", "-j", str(j), "-o", "%Q").stdout)
    a = sleeper(cluster, "a")
    x = sleeper(cluster, "x", hold=True)
    y = sleeper(cluster, "y")
    assert prio(x) == 0 and prio(y) == prio(a) - 1
    run(cluster, "scontrol", "release", str(x))
    assert prio(x) == prio(y) - 1


def test_scontrol_show_array_order_as_slurm(cluster):
    """slurmctld 22.05.8's order: for the array's id its master record (the pending
    rest) first, then the tasks newest first; in the whole list the master after
    the tasks split off from it (checked side by side)."""
    a = int(run(cluster, "sbatch", "--parsable", "-a", "1-3", "-n", "4", "--wrap",
                "sleep 60").stdout)
    cluster.wait_for(lambda: len([j for j in cluster.jobs().values()
                                  if cluster.state_of(j) == "RUNNING"]) == 2, "two tasks run")
    ids = lambda *args: re.findall(r"^JobId=(\d+)", run(cluster, "scontrol", "show", "job",
                                                        *args).stdout, re.M)
    assert ids(str(a)) == [str(a), str(a + 2), str(a + 1)]
    assert ids() == [str(a + 1), str(a + 2), str(a)]
    run(cluster, "scancel", str(a))


@pytest.mark.parametrize("def_mem", ["100", "0"])
def test_min_memory_without_mem(make_cluster, def_mem):
    """squeue %m and scontrol's MinMemory* for jobs without --mem, as 22.05
    (side by side, DefMemPerCPU=100 and unset): the default per CPU when there
    is one, else 0 (the whole node; TRES still counts the node's memory);
    --mem=0 is 0 either way; an explicit size is shown as asked."""
    c = make_cluster(nodes=1, cpus=4, gpus=0, conf_extra="DefMemPerCPU=%s\n" % def_mem)
    ids = {}
    for name, args in (("none", []), ("two", ["-n2"]), ("zero", ["--mem=0"]),
                       ("size", ["--mem=300"]), ("percpu", ["--mem-per-cpu=50", "-n2"])):
        ids[name] = run(c, "sbatch", "--parsable", "-H", "-o", "/dev/null", *args,
                        "--wrap", "true").stdout.strip()
    out = run(c, "squeue", "-h", "-o", "%i %m").stdout.split("\n")
    got = dict(l.split() for l in out if l)
    dflt = "100M" if def_mem == "100" else "0"
    assert [got[ids[k]] for k in ("none", "two", "zero", "size", "percpu")] == [
        dflt, dflt, "0", "300M", "50M"], got
    text = run(c, "scontrol", "show", "job", ids["zero"]).stdout
    assert " MinMemoryNode=0 " in text and ",mem=4000M," in text, text
    text = run(c, "scontrol", "show", "job", ids["none"]).stdout
    want = " MinMemoryCPU=100M " if def_mem == "100" else " MinMemoryNode=0 "
    assert want in text, text
    run(c, "scancel", *ids.values())


def test_allocation_is_not_requeued(cluster):
    """salloc's allocation as 22.05 (side by side): Requeue=1 (JobRequeue) but
    scontrol requeue refuses it, 'Only batch jobs are accepted or processed'."""
    p = run(cluster, "salloc", "--no-shell", "-n1")
    jid = int(re.search(r"Granted job allocation (\d+)", p.stderr).group(1))
    text = run(cluster, "scontrol", "show", "job", str(jid)).stdout
    assert "\n   Requeue=1 Restarts=0 BatchFlag=0 " in text, text
    assert scontrol_err(cluster, "requeue", str(jid)) == (
        "Only batch jobs are accepted or processed for job %d\n" % jid)
    assert cluster.state_of(cluster.job(jid)) == "RUNNING"
    run(cluster, "scancel", str(jid))
