"""Job steps as Slurm 22.05 lists and confines them (issue 5's gaps):

- `squeue -s` and `scontrol show step`: a job made by salloc or by srun
  outside an allocation has no `.batch` step; with PrologFlags=Contain every
  allocation has a `.extern` step (none without it); the order and layout
  are those of squeue/scontrol 22.05 (checked side by side with a real
  slurmctld 22.05.8: numbered steps, then batch, then extern in squeue -s;
  extern, batch, then numbered in scontrol show step);
- srun --signal=SIG@TIME reaching the step's tasks (and sbatch's, unless
  B: keeps it to the batch shell), scancel -s SIG J.S reaching only that
  step's tasks;
- a step's tasks see only the step's GPUs (CUDA_VISIBLE_DEVICES), and as
  root on a cgroup v1 host the devices cgroup denies the other GPUs;
- a compute node lost during a step: the job ends NODE_FAIL and srun says
  why.
"""
import os
import re
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest

from conftest import BIN, need


def lines(text):
    return [l for l in text.splitlines() if l]


STEP_RE = re.compile(r"StepId=(\S+) UserId=\d+ StartTime=\S+ TimeLimit=UNLIMITED")


def test_allocation_steps_have_no_batch_step(cluster):
    need("salloc", "srun", "squeue", "scontrol")
    script = ("srun -n1 sleep 5 & sleep 1.5; squeue -s -h -o '%i %j %N'; echo ==; "
              "scontrol show step; echo ==; scontrol show step $SLURM_JOB_ID.batch; echo rc=$?; "
              "scontrol show job $SLURM_JOB_ID | grep -o 'BatchFlag=[0-9]'; kill %1; wait")
    p = cluster.run("salloc", "-N1", "bash", "-c", script, timeout=60)
    assert p.returncode == 0, p.stderr
    sq, show, rest = p.stdout.split("==\n")
    assert re.fullmatch(r"\d+\.0 sleep node1", sq.strip()), p.stdout
    assert STEP_RE.findall(show) and all(s.endswith(".0") for s in STEP_RE.findall(show)), show
    assert "   Nodes=1 CPUs=1 Tasks=1 Name=sleep Network=(null)\n" in show, show
    assert re.search(r"   TRES=cpu=1,mem=(0|\d+M),node=1\n", show), show
    assert "   ResvPorts=(null)\n" in show, show
    assert "   CPUFreqReq=Default Dist=Cyclic\n" in show, show  # one task: 22.05.8 says Cyclic
    assert re.search(r"   SrunHost:Pid=\S+:\d+\n\n", show), show
    assert re.search(r"Job step \d+\.batch not found\nrc=1", rest), rest
    assert "BatchFlag=0" in rest
    # srun outside an allocation: its job has only the step.
    p = cluster.run("srun", "-n1", "bash", "-c", "squeue -s -h -o '%i %j'", timeout=60)
    assert p.returncode == 0, p.stderr
    assert re.fullmatch(r"\d+\.0 bash", p.stdout.strip()), p.stdout
    # No steps anywhere; an unknown job.
    p = cluster.run("scontrol", "show", "step")
    assert p.stdout == "No job steps in the system\n", p.stdout
    p = cluster.run("scontrol", "show", "step", "999.0")
    assert p.returncode == 1 and "slurm_get_job_steps error: Invalid job id specified" in p.stderr


def test_extern_step_with_contain(make_cluster):
    need("salloc", "sbatch", "squeue", "scontrol")
    c = make_cluster(conf_extra="PrologFlags=Contain\n")
    script = ("srun -n1 sleep 5 & sleep 1.5; squeue -s -h -o '%i %j %N'; echo ==; "
              "scontrol show step $SLURM_JOB_ID; kill %1; wait")
    p = c.run("salloc", "-N2", "bash", "-c", script, timeout=60)
    assert p.returncode == 0, p.stderr
    sq, show = p.stdout.split("==\n")
    ids = [l.split() for l in lines(sq)]
    assert [(i.split(".")[1], n, nl) for i, n, nl in ids] == \
        [("0", "sleep", "node1"), ("extern", "extern", "node[1-2]")], sq
    assert [s.split(".")[1] for s in STEP_RE.findall(show)] == ["extern", "0"], show
    ext = show.split("\n\n")[0]
    assert ext.splitlines()[1:] == [
        "   State=RUNNING Partition=debug NodeList=node[1-2]",
        "   Nodes=2 CPUs=0 Tasks=1 Name=extern Network=(null)",
        "   TRES=(null)", "   ResvPorts=(null)", "   CPUFreqReq=Default",
        "   SrunHost:Pid=(null):0"], ext
    # A batch job: batch, then extern, in squeue -s; extern first in scontrol.
    out = c.work / "b.out"
    p = c.run("sbatch", "-N1", "-o", str(out), "--wrap",
              "squeue -s -h -o '%i %j'; scontrol -o show step $SLURM_JOB_ID")
    jid = int(p.stdout.split()[-1])
    c.wait_job(jid, "COMPLETED")
    text = out.read_text()
    assert lines(text)[:2] == ["%d.batch batch" % jid, "%d.extern extern" % jid], text
    assert [l.split()[0] for l in lines(text)[2:]] == \
        ["StepId=%d.extern" % jid, "StepId=%d.batch" % jid], text


def test_signal_option_reaches_step_tasks(cluster):
    """srun --signal=USR1@55 -t1: the tasks get SIGUSR1 about 5 s in (time
    enough for their traps, even under ASan)."""
    need("srun")
    task = "trap 'echo got USR1; exit 0' USR1; while :; do sleep 0.1; done"
    start = time.time()
    p = cluster.run("srun", "--signal=USR1@55", "-t1", "-n2", "-l", "bash", "-c", task,
                    timeout=50)
    assert p.returncode == 0, p.stdout + p.stderr
    assert sorted(lines(p.stdout)) == ["0: got USR1", "1: got USR1"], p.stdout
    assert time.time() - start < 45


def test_scancel_signal_reaches_only_that_step(cluster):
    need("salloc", "srun", "scancel")
    task = ("trap 'echo step $SLURM_STEP_ID got USR1; touch got.$SLURM_STEP_ID; exit 0' USR1; "
            "touch ready.$SLURM_STEP_ID; while [ ! -e stop ]; do sleep 0.1; done; "
            "echo step $SLURM_STEP_ID done")
    script = ("srun -n1 --exact bash -c \"$T\" &\n"
              "srun -n1 --exact bash -c \"$T\" &\n"
              "w() { for i in $(seq 600); do [ -e $1 ] && return; sleep 0.1; done; }\n"
              "w ready.0; w ready.1\n"
              "scancel -s USR1 $SLURM_JOB_ID.0; echo scancel=$?\n"
              "w got.0; touch stop; wait\n")
    p = cluster.run("salloc", "-n2", "bash", "-c", script, timeout=90, env={"T": task})
    assert p.returncode == 0, p.stderr
    out = sorted(lines(p.stdout))
    assert out == ["scancel=0", "step 0 got USR1", "step 1 done"], p.stdout + p.stderr


GPU_CHECK = ("echo CVD=$CUDA_VISIBLE_DEVICES STEP_GPUS=$SLURM_STEP_GPUS; "
             "for g in 0 1; do if head -c1 $DEVDIR/gpu$g >/dev/null 2>&1; then echo gpu$g ok; "
             "else echo gpu$g denied; fi; done")


def test_step_sees_only_its_gpus(cluster):
    """Two steps holding one GPU each in a 2-GPU allocation: each task sees
    only its step's GPU in CUDA_VISIBLE_DEVICES (emulated GPUs are plain
    files: nothing is denied)."""
    need("salloc", "srun")
    script = ("srun -n1 --exact --gpus=1 bash -c 'echo A $CUDA_VISIBLE_DEVICES; sleep 3' &\n"
              "sleep 1\n"
              "srun -n1 --exact --gpus=1 bash -c 'echo B $CUDA_VISIBLE_DEVICES'\n"
              "srun -n1 --exact --overlap bash -c 'echo C $CUDA_VISIBLE_DEVICES'\n"
              "wait\n")
    p = cluster.run("salloc", "-n2", "--gres=gpu:2", "bash", "-c", script, timeout=60)
    assert p.returncode == 0, p.stderr
    out = sorted(lines(p.stdout))
    assert out[2] == "C 0,1" and {out[0][2:], out[1][2:]} == {"0", "1"}, p.stdout


def _devices_cgroup_ok():
    """None when this host lets us make a devices cgroup, else why not."""
    if os.geteuid() != 0:
        return "not root: the devices cgroup needs root"
    root = Path("/sys/fs/cgroup/devices")
    if not os.access(root / "devices.deny", os.W_OK):
        return "no writable cgroup v1 devices hierarchy at %s" % root
    probe = root / ("loom-probe-%d" % os.getpid())
    try:
        probe.mkdir()
        (probe / "devices.deny").write_text("c 1:7 rwm")
    except OSError as e:
        return "cannot use the devices cgroup at %s: %s" % (root, e)
    finally:
        try:
            probe.rmdir()
        except OSError:
            pass
    return None


def _devices_cgroup_enforced(dev):
    """None when a process put in a devices cgroup that denies dev's device
    really cannot open dev (the host enforces the rules), else why not: a
    sandboxed kernel (gVisor, say) can show the v1 files and ignore them."""
    st = os.stat(dev)
    probe = Path("/sys/fs/cgroup/devices") / ("loom-probe-%d" % os.getpid())
    try:
        probe.mkdir()
        (probe / "devices.deny").write_text("c %d:%d rwm" % (os.major(st.st_rdev),
                                                           os.minor(st.st_rdev)))
    except OSError as e:
        return "cannot use the devices cgroup: %s" % e
    try:
        pid = os.fork()
        if pid == 0:  # the child: into the cgroup, then try the device
            code = 3
            try:
                (probe / "cgroup.procs").write_text(str(os.getpid()))
                try:
                    open(dev, "rb").close()
                    code = 1
                except OSError:
                    code = 0
            finally:
                os._exit(code)
        status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    finally:
        for _ in range(50):
            try:
                probe.rmdir()
                break
            except OSError:
                time.sleep(0.1)
    if status == 0:
        return None
    if status == 1:
        return "this host does not enforce the devices cgroup's rules (a denied device opened)"
    return "cannot move a process into a devices cgroup here"


def test_devices_cgroup_denies_other_gpus(make_cluster):
    """As root on a cgroup v1 host: the GPUs are character devices (mknod'd
    copies of /dev/full and /dev/random); a step's tasks may open only the
    step's, and CUDA_VISIBLE_DEVICES counts from 0 as under Slurm's
    ConstrainDevices."""
    why = _devices_cgroup_ok()
    if why:
        pytest.skip(why)
    need("salloc", "srun")
    c = make_cluster(nodes=1, start=False, conf_extra="TaskPlugin=task/affinity,task/cgroup\n")
    (c.root / "cgroup.conf").write_text("ConstrainDevices=yes\n")  # as Slurm's ConstrainDevices
    devdir = c.root / "dev" / "node1"
    for i, minor in enumerate((7, 8)):
        (devdir / ("gpu%d" % i)).unlink()
        try:
            os.mknod(devdir / ("gpu%d" % i), 0o666 | stat.S_IFCHR, os.makedev(1, minor))
        except OSError as e:
            pytest.skip("cannot make device files here: %s" % e)
        try:  # a nodev mount, or a container's own devices cgroup, refuses them
            with open(devdir / ("gpu%d" % i), "rb") as f:
                f.read(1)
        except OSError as e:
            pytest.skip("cannot open a device file made here: %s" % e)
    why = _devices_cgroup_enforced(devdir / "gpu0")
    if why:
        pytest.skip(why)
    c.start()
    env = {"DEVDIR": str(devdir)}
    script = ("srun -n1 --exact --gpus=1 sleep 4 &\n"
              "sleep 1.5\n"
              "srun -n1 --exact --gpus=1 bash -c \"$CHECK\"\n"
              "echo ==\n"
              "srun -n1 --exact --overlap bash -c \"$CHECK\"\n"
              "wait\n")
    p = c.run("salloc", "-n2", "--gres=gpu:2", "bash", "-c", script, timeout=60,
              env=dict(env, CHECK=GPU_CHECK))
    assert p.returncode == 0, p.stdout + p.stderr
    one, both = p.stdout.split("==\n")
    m = re.match(r"CVD=0 STEP_GPUS=(\d)\n", one)
    assert m, one
    mine = int(m.group(1))
    assert lines(one)[1:] == ["gpu%d %s" % (g, "ok" if g == mine else "denied")
                             for g in (0, 1)], one
    assert lines(both) == ["CVD=0,1 STEP_GPUS=0,1", "gpu0 ok", "gpu1 ok"], both
    # A job with one of the node's two GPUs: its step cannot open the other.
    p = c.run("srun", "-n1", "--gres=gpu:1", "bash", "-c", GPU_CHECK, env=env, timeout=60)
    assert lines(p.stdout) == ["CVD=0 STEP_GPUS=0", "gpu0 ok", "gpu1 denied"], \
        p.stdout + p.stderr
    # A batch script with one GPU (the second: a job holds the first): it cannot
    # open the other (the whole job is confined, as with Slurm's ConstrainDevices).
    p = c.run("sbatch", "--parsable", "--gres=gpu:1", "-o", "/dev/null", "--wrap", "sleep 20")
    blocker = int(p.stdout.strip())
    c.wait_job(blocker, "RUNNING", timeout=60)
    p = c.run("sbatch", "--parsable", "--gres=gpu:1", "-o", str(c.work / "b-%j.out"), "--wrap",
              GPU_CHECK.replace("STEP_GPUS=$SLURM_STEP_GPUS", "JOB_GPUS=$SLURM_JOB_GPUS"),
              env=env)
    job = int(p.stdout.strip())
    c.wait_job(job, "COMPLETED", timeout=60)
    out = (c.work / ("b-%d.out" % job)).read_text()
    m = re.match(r"CVD=0 JOB_GPUS=(\d)\n", out)  # numbered from 0, as its steps
    assert m, out
    assert m.group(1) == "1", out  # the blocker took the first GPU: 1 is seen as 0
    assert lines(out)[1:] == ["gpu%d %s" % (g, "ok" if g == int(m.group(1)) else "denied")
                              for g in (0, 1)], out
    c.run("scancel", str(blocker))
    # Each step's cgroup goes when its supervisor ends.
    cg = Path("/sys/fs/cgroup/devices/loom") / node_level(c, "node1")
    end = time.time() + 30
    while list(cg.glob("step_*")) and time.time() < end:
        time.sleep(0.2)
    assert list(cg.glob("step_*")) == []
    for d in (cg, cg.parent):  # the levels above, when no other cluster uses them
        try:
            d.rmdir()
        except OSError:
            pass


def node_level(cluster, node):
    """The node's level in the cgroup paths (cgroup.h): name, "_", FNV-1a of its loomd.sock."""
    h = 2166136261
    for b in str(cluster.root / "spool" / node / "loomd.sock").encode():
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return "%s_%08x" % (node, h)


def _step_supervisor(cluster, node):
    """The pid of the step supervisor running on node (a loomstepd whose dir
    is in that node's spool), or None."""
    from conftest import _cmdline, _pids
    spool = str(cluster.root / "spool" / node) + "/step"
    for pid in _pids():
        cmd = _cmdline(pid)
        if cmd and cmd[0].endswith("loomstepd") and any(a.startswith(spool) for a in cmd):
            return pid
    return None


def test_lost_node_ends_step_node_fail(make_cluster):
    """kill -9 of node2's loomd, its step supervisor and the tasks under it
    (a host that died) during a 2-node step: the job ends NODE_FAIL once
    SlurmdTimeout passes, and srun says why, as srun 22.05 does."""
    from conftest import _pids, _session
    need("srun", "scontrol")
    c = make_cluster(conf_extra="SlurmdTimeout=10\n")
    p = subprocess.Popen([str(BIN / "srun"), "-N2", "-n2", "-l", "bash", "-c",
                          "echo started; sleep 120"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=c.env, cwd=str(c.work))
    try:
        seen = sorted([p.stdout.readline(), p.stdout.readline()])
        assert seen == ["0: started\n", "1: started\n"], seen
        stepd = _step_supervisor(c, "node2")
        assert stepd, "no step supervisor on node2"
        job = int(c.rpc("job.info")["jobs"][0]["job_id"])
        c.stop_node("node2", signal.SIGKILL)
        for pid in [q for q in _pids() if _session(q) == stepd]:
            os.kill(pid, signal.SIGKILL)
        out, err = p.communicate(timeout=90)
    finally:
        if p.poll() is None:
            p.kill()
    assert "srun: error: Node failure on node2" in err, err
    assert "srun: Job step aborted: Waiting up to" in err, err
    assert p.returncode != 0, err
    c.wait_job(job, "NODE_FAIL", timeout=30)
    show = c.run("scontrol", "show", "job", str(job)).stdout
    assert "JobState=NODE_FAIL Reason=" in show, show
    node = c.run("sinfo", "-h", "-N", "-n", "node2", "-o", "%t").stdout.strip()
    assert node.startswith("down"), node


def test_batch_signal_reaches_steps_unless_b(cluster):
    """sbatch --signal=USR1@55 -t1: the srun step's task gets SIGUSR1; with
    B: only the batch shell does (sbatch 22.05's man page)."""
    need("sbatch", "srun")
    task = ('trap "echo step got USR1; exit 0" USR1; n=0; '
            'while [ $n -lt 100 ]; do sleep 0.1; n=$((n+1)); done')
    outs = {}
    for flag in ("", "B:"):
        out = cluster.work / ("sig%s.out" % (flag[:1] or "x"))
        script = ("#!/bin/bash\ntrap 'echo shell got USR1' USR1\n"
                  "srun -n1 bash -c '%s' &\nwait\nwait\necho done\n" % task)
        p = cluster.run("sbatch", "--signal=%sUSR1@55" % flag, "-t1", "-o", str(out),
                        input=script)
        jid = int(p.stdout.split()[-1])
        outs[flag] = (jid, out)
    for flag, (jid, out) in outs.items():
        cluster.wait_job(jid, "COMPLETED", timeout=60)
        text = out.read_text()
        if flag == "":
            assert "step got USR1" in text and "shell got USR1" not in text, text
        else:
            assert "shell got USR1" in text and "step got USR1" not in text, text
