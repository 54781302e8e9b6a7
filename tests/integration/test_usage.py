"""Usage gathering on the nodes (issue 7): the batch step and srun steps of a
job that holds ~200 MiB and burns ~1 s of CPU get plausible MaxRSS and
TotalCPU in the controller's records (the journal's step.usage / step.end
events, messages.md §6.1 fields), and sstat shows a running step's figures.

With loomdbd beside the cluster, sacct prints the same records in Slurm's
formats (MaxRSS "204800K" or "200M", TotalCPU "00:01.234").

Bounds are generous: CI runs on 2 shared cores, daemons under ASan."""
import json
import os
import re
import time

from conftest import BIN, need
from test_acct_link import acct_beside

MIB = 1024  # KiB

PROG = r"""
import sys, time
b = bytearray(200 << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
t = time.process_time()
while time.process_time() - t < 1.0:
    pass
print("burned", flush=True)
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 0)
"""

CONF = "JobAcctGatherType=jobacct_gather/linux\nJobAcctGatherFrequency=task=1\n"


def journal_events(cluster, job_id):
    out = []
    for f in sorted(cluster.state.glob("journal.*")):
        for line in f.read_text(errors="replace").splitlines():
            line = line.strip("\0").strip()
            if not line.startswith("{"):
                continue
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if ev.get("job_id") == job_id and ev.get("ev") in ("step.end", "step.usage"):
                out.append(ev)
    return out


def wait_usage(cluster, job_id, want):
    """The usage events of the job, once there are `want` of them."""
    deadline = time.time() + 30
    while True:
        evs = [e for e in journal_events(cluster, job_id) if "usage" in e]
        if len(evs) >= want or time.time() > deadline:
            return evs
        time.sleep(0.2)


def check_plausible(u, what, sampled=True):
    assert 190 * MIB <= u["max_rss"] <= 2048 * MIB, (what, u)
    assert 0 < u["ave_rss"] <= u["max_rss"], (what, u)
    if sampled:
        assert u["max_vmsize"] >= u["max_rss"], (what, u)
    assert 900_000 <= u["total_cpu"] <= 60_000_000, (what, u)
    assert u["total_cpu"] == u["user_cpu"] + u["system_cpu"], (what, u)
    assert u["user_cpu"] >= 200_000, (what, u)  # page faults of 200 MiB are system time
    assert u["max_rss_node"] == "node1", (what, u)
    assert u["max_rss_task"] == 0, (what, u)
    assert u["max_disk_read"] >= 0 and u["max_disk_write"] >= 0, (what, u)
    assert u["gpu_time"] == 0 and "gpu_util" not in u, (what, u)


def test_batch_and_srun_step_usage(make_cluster):
    need("sbatch", "srun", "sstat")
    cluster = make_cluster(nodes=1, gpus=0, conf_extra=CONF)
    prog = cluster.work / "burn.py"
    prog.write_text(PROG)
    script = ("#!/bin/bash\n"
              "python3 %s\n"
              "srun -n1 python3 %s\n"
              "srun -n1 python3 %s 8 &\n"
              "for i in $(seq 60); do grep -q burned slurm-$SLURM_JOB_ID.out && "
              "[ $(grep -c burned slurm-$SLURM_JOB_ID.out) -ge 3 ] && break; sleep 0.5; done\n"
              "sleep 2\n"
              "sstat -n -P -o JobID,MaxRSS,NTasks,MaxRSSNode $SLURM_JOB_ID.1\n"
              "sstat -n -P -o JobID,MaxRSS,NTasks,MaxRSSNode $SLURM_JOB_ID.batch\n"
              "wait\n" % (prog, prog, prog))
    reply = cluster.submit(script, ntasks=1,
                           env=["PATH=%s:%s" % (BIN, os.environ.get("PATH", "")),
                                "SLURM_CONF=%s" % cluster.conf])
    assert reply["rc"] == 0, reply
    jid = reply["job_id"]
    rec = cluster.wait_job(jid, "COMPLETED", "FAILED", timeout=120)
    out = (cluster.work / ("slurm-%d.out" % jid)).read_text()
    assert cluster.state_of(rec) == "COMPLETED", out

    # sstat of the running step 1: sampled every second, ~200 MiB held.
    st = [l for l in out.splitlines() if l.startswith("%d.1|" % jid)]
    assert len(st) == 1, out
    _, rss, ntasks, node = st[0].split("|")[:4]
    kib = kib_of(rss)
    assert kib >= 190 * MIB and ntasks == "1" and node == "node1", st
    # sstat J.batch: the script's supervisor (its python has ended: the kernel's peak)
    st = [l for l in out.splitlines() if l.startswith("%d.batch|" % jid)]
    assert len(st) == 1, out
    _, rss, ntasks, node = st[0].split("|")[:4]
    assert kib_of(rss) >= 190 * MIB and ntasks == "1" and node == "node1", st

    evs = wait_usage(cluster, jid, 3)
    batch = [e for e in evs if e["ev"] == "step.usage" and e.get("step_id") == "batch"]
    steps = {e["step_id"]: e for e in evs if e["ev"] == "step.end"}
    assert len(batch) == 1 and set(steps) == {0, 1}, evs
    check_plausible(batch[0]["usage"], "batch")
    check_plausible(steps[0]["usage"], "step 0")
    check_plausible(steps[1]["usage"], "step 1")
    # the batch step waited for its srun clients too, but burned only its own second
    assert batch[0]["usage"]["total_cpu"] < 30_000_000, batch


def test_no_gathering_keeps_rusage(make_cluster):
    """jobacct_gather/none: no samples, yet the kernel's rusage of the reaped
    tasks still gives CPU time and peak RSS."""
    need("srun", "salloc")
    cluster = make_cluster(nodes=1, gpus=0)
    prog = cluster.work / "burn.py"
    prog.write_text(PROG)
    p = cluster.run("salloc", "-n1", "srun", "python3", prog, timeout=90)
    assert p.returncode == 0, p.stdout + p.stderr
    jobs = sorted(cluster.jobs())
    evs = wait_usage(cluster, jobs[-1], 1)
    ends = [e for e in evs if e["ev"] == "step.end"]
    assert len(ends) == 1, evs
    check_plausible(ends[0]["usage"], "step 0", sampled=False)


def kib_of(text):
    """sacct/sstat's size text ("205312K", "200M", "1.20G") in KiB."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGT]?)", text)
    assert m, text
    return float(m.group(1)) * {"": 1 / 1024, "K": 1, "M": 1024, "G": 1024 ** 2,
                                "T": 1024 ** 3}[m.group(2)]


def cpu_secs(text):
    """TotalCPU text ("00:01.234", "01:02:03", "1-00:00:00") in seconds."""
    days, _, rest = text.rpartition("-")
    parts = [float(x) for x in rest.split(":")]
    secs = parts[-1] + 60 * parts[-2] + (3600 * parts[-3] if len(parts) > 2 else 0)
    return secs + 86400 * (int(days) if days else 0)


def test_usage_reaches_sacct(make_cluster):
    need("sbatch", "srun", "sacct", "loomdbd")
    with acct_beside(make_cluster, conf_extra=CONF, nodes=1, gpus=0) as (c, _):
        prog = c.work / "burn.py"
        prog.write_text(PROG)
        jid = c.run("sbatch", "--parsable", "--wrap",
                    "python3 %s; srun python3 %s" % (prog, prog), check=True).stdout.strip()
        rows = {}

        def have():
            p = c.run("sacct", "-n", "-P", "-S", "2000-01-01", "-j", jid, "-o",
                      "JobID,State,MaxRSS,AveRSS,TotalCPU,UserCPU,SystemCPU,MaxDiskRead,MaxRSSNode")
            rows.clear()
            rows.update({l.split("|")[0]: l.split("|") for l in p.stdout.splitlines() if l})
            return all(k in rows and rows[k][1] == "COMPLETED" and rows[k][2]
                       for k in (jid + ".batch", jid + ".0"))
        c.wait_for(have, "usage of %s.batch and %s.0 in sacct (%s)" % (jid, jid, rows), timeout=90,
                   interval=0.5)
        for key in (jid + ".batch", jid + ".0"):
            _, _, maxrss, averss, total, user, system, disk, node = rows[key]
            assert 190 * MIB <= kib_of(maxrss) <= 2048 * MIB, rows[key]
            assert 0 < kib_of(averss) <= kib_of(maxrss), rows[key]
            assert 0.9 <= cpu_secs(total) <= 60, rows[key]
            assert abs(cpu_secs(user) + cpu_secs(system) - cpu_secs(total)) < 0.01, rows[key]
            assert re.fullmatch(r"0|\d+\.\d\dM|\d+(\.\d\d)?[MGT]", disk) and node == "node1", rows[key]
        # the job's row adds up its steps' CPU, as slurmdbd's
        assert cpu_secs(rows[jid][4]) >= 1.8, rows
