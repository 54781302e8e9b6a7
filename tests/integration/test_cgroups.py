"""Job cgroups (cgroup.h, cgconf.h), as root on a host with cgroups (v1 or v2):

- ProctrackType=proctrack/cgroup (Slurm's default): every job runs in a cgroup
  of its own, its srun steps' tasks too, with no limits, and leaving the
  cgroup removed when the job ends;
- TaskPlugin=task/cgroup with cgroup.conf's ConstrainRAMSpace: the job's
  memory limit is its allocation (AllowedRAMSpace percent), a job that goes
  over it is OOM-killed and ends OUT_OF_MEMORY, as in Slurm 22.05;
- a cgroup.conf with a bad line stops loomd with file:line.
Skipped where the host has no writable cgroup hierarchy (not root, or a
read-only one)."""
import os
import re
import time
from pathlib import Path

import pytest

from conftest import need

CG = Path("/sys/fs/cgroup")
TRACKED = "ProctrackType=proctrack/cgroup\n"
CONSTRAINED = TRACKED + "TaskPlugin=task/affinity,task/cgroup\n"


def host_cgroups():
    """'v2', 'v1', or pytest.skip with the reason."""
    if os.getuid() != 0:
        pytest.skip("needs root")
    if (CG / "cgroup.controllers").exists() and os.access(CG, os.W_OK):
        return "v2"
    if (CG / "memory" / "cgroup.procs").exists() and os.access(CG / "memory", os.W_OK):
        return "v1"
    pytest.skip("no writable cgroup hierarchy at %s" % CG)


def memory_cgroup(text, version):
    """The job's cgroup in a /proc/PID/cgroup listing: v1's memory line, or v2's."""
    for line in text.splitlines():
        _, ctl, path = line.split(":", 2)
        if ctl == ("" if version == "v2" else "memory"):
            return path
    return None


def cgroup_dir(version, path):
    return CG / path.lstrip("/") if version == "v2" else CG / "memory" / path.lstrip("/")


def sbatch(c, *args):
    p = c.run("sbatch", "--parsable", *args)
    assert p.returncode == 0, p.stderr
    return int(p.stdout.strip().split(";")[0])


def wait_state(c, job, states, timeout=60):
    end = time.time() + timeout
    st = None
    while time.time() < end:
        st = c.run("scontrol", "show", "job", str(job)).stdout
        m = re.search(r"JobState=(\S+)", st)
        if m and m.group(1) in states:
            return m.group(1)
        time.sleep(0.2)
    raise AssertionError("job %d never reached %s:\n%s" % (job, states, st))


def test_tracked_job_and_steps_share_a_cgroup(make_cluster):
    version = host_cgroups()
    need("srun")
    c = make_cluster(nodes=1, gpus=0, conf_extra=TRACKED)
    job = sbatch(c, "-n1", "--wrap", "cat /proc/self/cgroup; echo ==; srun cat /proc/self/cgroup;"
                 " echo ==; setsid sleep 301 & echo $! > left.pid; sleep 1")
    assert wait_state(c, job, {"COMPLETED", "FAILED"}) == "COMPLETED"
    out = (c.work / ("slurm-%d.out" % job)).read_text()
    batch, step, _ = out.split("==\n")
    path = memory_cgroup(batch, version)
    assert re.search(r"/loom(\.slice)?/node1_[0-9a-f]{8}/job_%d$" % job, path), batch
    assert memory_cgroup(step, version) == path, out
    # what left the job's session went with its cgroup, and so did the cgroup
    left = int((c.work / "left.pid").read_text())
    end = time.time() + 30
    while (cgroup_dir(version, path).exists() or alive(left)) and time.time() < end:
        time.sleep(0.2)
    assert not alive(left)
    assert not cgroup_dir(version, path).exists()


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_memory_limit_and_oom(make_cluster):
    version = host_cgroups()
    c = make_cluster(nodes=1, gpus=0, conf_extra=CONSTRAINED, start=False)
    (c.root / "cgroup.conf").write_text("CgroupAutomount=yes\nConstrainRAMSpace=yes\n"
                                        "AllowedRAMSpace=100\n")
    c.start()
    limit_file = "memory.max" if version == "v2" else "memory.limit_in_bytes"
    job = sbatch(c, "--mem=60", "-o", str(c.work / "oom-%j.out"), "--wrap",
                 "d=%s$(grep -E '%s' /proc/self/cgroup | cut -d: -f3); "
                 "cat $d/%s; python3 -c 'x = bytearray(300 << 20); print(len(x))'; echo after"
                 % (CG if version == "v2" else CG / "memory",
                    "^0::" if version == "v2" else ":memory:", limit_file))
    assert wait_state(c, job, {"OUT_OF_MEMORY", "COMPLETED", "FAILED"}) == "OUT_OF_MEMORY"
    out = (c.work / ("oom-%d.out" % job)).read_text()
    assert out.split("\n")[0] == str(60 << 20), out
    assert "after" in out and str(300 << 20) not in out, out
    assert out.endswith("slurmstepd-node1: error: Detected 1 oom-kill event(s) in StepId=%d.batch"
                        " cgroup. Some of your processes may have been killed by the cgroup "
                        "out-of-memory handler.\n" % job), out
    p = c.run("squeue", "-h", "-t", "all", "-j", str(job), "-o", "%T")
    assert p.stdout == "OUT_OF_MEMORY\n", p.stdout + p.stderr
    show = c.run("scontrol", "show", "job", str(job)).stdout
    assert " ExitCode=0:125\n" in show, show  # Slurm's SIG_OOM status, whatever the script did
    # a job within its limit is untouched
    ok = sbatch(c, "--mem=200", "-o", "/dev/null", "--wrap",
                "python3 -c 'x = bytearray(50 << 20)'")
    assert wait_state(c, ok, {"OUT_OF_MEMORY", "COMPLETED", "FAILED"}) == "COMPLETED"


def test_bad_cgroup_conf_stops_loomd(make_cluster):
    c = make_cluster(nodes=1, gpus=0, conf_extra=CONSTRAINED, start=False)
    (c.root / "cgroup.conf").write_text("ConstrainRAMSpace=yes\nConstrainRAM=yes\n")
    c.start_ctld()
    d = c.start_node("node1")
    end = time.time() + 30
    while d.proc.poll() is None and time.time() < end:
        time.sleep(0.1)
    assert d.proc.poll() not in (None, 0)
    log = (c.logdir / "loomd-node1.log.stderr").read_text()
    assert "%s:2: unknown cgroup.conf key 'ConstrainRAM'" % (c.root / "cgroup.conf") in log, log


def test_step_oom(make_cluster):
    """An srun step whose task the OOM killer ends: srun says "Out Of Memory"
    and sacct shows the step, and the job, OUT_OF_MEMORY (as Slurm 22.05)."""
    host_cgroups()
    need("srun")
    from test_acct_link import acct_beside
    with acct_beside(make_cluster, "sqlite", CONSTRAINED, start=False, nodes=1, gpus=0) as (c, _):
        (c.root / "cgroup.conf").write_text("ConstrainRAMSpace=yes\n")
        c.start()
        job = sbatch(c, "--mem=60", "-o", str(c.work / "s-%j.out"), "--wrap",
                     "srun python3 -c 'x = bytearray(300 << 20)'; echo rc=$?")
        assert wait_state(c, job, {"OUT_OF_MEMORY", "COMPLETED", "FAILED"}) == "OUT_OF_MEMORY"
        out = (c.work / ("s-%d.out" % job)).read_text()
        assert ("slurmstepd-node1: error: Detected 1 oom-kill event(s) in StepId=%d.0 cgroup. Some "
                "of your processes may have been killed by the cgroup out-of-memory handler.\n"
                "srun: error: node1: task 0: Out Of Memory\n" % job) in out, out
        assert "rc=137\n" in out, out

        def states(field="State"):
            p = c.run("sacct", "-n", "-P", "-S", "2000-01-01", "-j", str(job), "-o",
                      "JobID," + field)
            return dict(l.split("|") for l in p.stdout.splitlines() if l)
        c.wait_for(lambda: all(states().get(k) not in (None, "RUNNING", "PENDING")
                               for k in ("%d.0" % job, str(job))),
                   "the job's and the step's ends in sacct", timeout=60, interval=0.5)
        got = states()
        assert got["%d.0" % job] == "OUT_OF_MEMORY", got
        assert got[str(job)] == "OUT_OF_MEMORY", got
        codes = states("ExitCode")
        assert codes[str(job)] == codes["%d.0" % job] == "0:125", codes
