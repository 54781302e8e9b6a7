"""srun on a real Loom cluster (conftest `cluster`: two nodes, 4 CPUs and 2
fake GPUs each): steps outside and inside allocations, tasks started by the
nodes' step supervisors, I/O, the task environment (CLI_SPEC §12 column T),
exit codes and messages as srun 22.05 prints them, signals, step resources
shared within an allocation, --pty, --mpi=pmi2, sstat and scancel of a step.
"""
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import fcntl
import time
from pathlib import Path

import pytest

from conftest import BIN, need


def srun(cluster, *args, **kw):
    need("srun")
    return cluster.run("srun", *args, **kw)


def lines(text):
    return [l for l in text.splitlines() if l]


def test_outside_allocation_runs_tasks_on_nodes(cluster):
    p = srun(cluster, "-v", "-N2", "-n4", "-l", "bash", "-c",
             "echo $SLURM_PROCID $SLURM_NODEID $SLURM_LOCALID $SLURMD_NODENAME")
    assert p.returncode == 0, p.stderr
    got = sorted(lines(p.stdout))
    # cons_tres fills node1 first and leaves node2 one task: 3+1 (srun 22.05 side by side)
    assert got == ["0: 0 0 0 node1", "1: 1 0 1 node1", "2: 2 0 2 node1", "3: 3 1 0 node2"], got
    m = re.search(r"^srun: jobid (\d+): nodes\(2\):`node\[1-2\]', cpu counts: 3\(x1\),1\(x1\)$",
                  p.stderr, re.M)
    assert m, p.stderr
    rec = cluster.wait_job(int(m.group(1)), "COMPLETED", "FAILED")
    assert cluster.state_of(rec) == "COMPLETED"
    assert "queued and waiting" not in p.stderr  # resources were free


def test_exit_codes_and_messages(cluster):
    p = srun(cluster, "-n2", "bash", "-c", "exit 3")
    assert p.returncode == 3
    assert "srun: error: node1: tasks 0-1: Exited with exit code 3" in p.stderr
    p = srun(cluster, "-n2", "no_such_command_xyz")
    assert p.returncode == 2
    assert p.stderr.count("slurmstepd-node1: error: execve(): no_such_command_xyz: No such file "
                          "or directory") == 2
    p = srun(cluster, "-n1", "bash", "-c", "kill -9 $$")
    assert p.returncode == 137
    assert "srun: error: node1: task 0: Killed" in p.stderr
    assert re.search(r"srun: Force Terminated StepId=\d+\.0", p.stderr)
    p = srun(cluster, "-n3", "-l", "bash", "-c", "exit $((SLURM_PROCID == 1 ? 4 : 0))")
    assert p.returncode == 4
    assert "srun: error: node1: task 1: Exited with exit code 4" in p.stderr


def test_task_environment(cluster):
    p = srun(cluster, "-N2", "-n3", "-c1", "--job-name=envj", "bash", "-c",
             "env | grep -E '^(SLURM|SLURMD)_' | sed \"s/^/$SLURM_PROCID:/\"")
    assert p.returncode == 0, p.stderr
    env = {}
    for l in lines(p.stdout):
        rank, kv = l.split(":", 1)
        k, v = kv.split("=", 1)
        env.setdefault(int(rank), {})[k] = v
    assert sorted(env) == [0, 1, 2]
    job = env[0]["SLURM_JOB_ID"]
    for r, e in env.items():
        node = "node1" if r < 2 else "node2"
        want = {"SLURM_JOB_ID": job, "SLURM_JOBID": job, "SLURM_STEP_ID": "0",
                "SLURM_STEPID": "0", "SLURM_PROCID": str(r), "SLURM_LOCALID": str(r % 2),
                "SLURM_NODEID": "0" if r < 2 else "1", "SLURM_STEP_NODELIST": "node[1-2]",
                "SLURM_NODELIST": "node[1-2]", "SLURM_JOB_NODELIST": "node[1-2]",
                "SLURM_STEP_NUM_NODES": "2", "SLURM_NNODES": "2", "SLURM_STEP_NUM_TASKS": "3",
                "SLURM_NTASKS": "3", "SLURM_NPROCS": "3", "SLURM_STEP_TASKS_PER_NODE": "2,1",
                "SLURM_TASKS_PER_NODE": "2,1", "SLURM_GTIDS": "0,1" if r < 2 else "2",
                "SLURMD_NODENAME": node, "SLURM_TOPOLOGY_ADDR": node,
                "SLURM_JOB_NAME": "envj", "SLURM_CPUS_PER_TASK": "1",
                "SLURM_CLUSTER_NAME": "loomtest", "SLURM_CONF": str(cluster.conf),
                "SLURM_JOB_USER": cluster.user, "SLURM_JOB_UID": str(os.getuid()),
                "SLURM_SUBMIT_DIR": str(cluster.work), "SLURM_JOB_PARTITION": "debug",
                "SLURM_SRUN_COMM_HOST": "127.0.0.1", "SLURM_LAUNCH_NODE_IPADDR": "127.0.0.1"}
        for k, v in want.items():
            assert e.get(k) == v, (r, k, e.get(k), v)
        assert e["SLURM_SRUN_COMM_PORT"] == e["SLURM_STEP_LAUNCHER_PORT"]
        assert re.fullmatch(r"0[0-7]{3}", e["SLURM_UMASK"])
        assert int(e["SLURM_TASK_PID"]) > 1
        assert "SLURM_CPUS_ON_NODE" in e and "SLURM_JOB_CPUS_PER_NODE" in e


def test_stdin_input_and_files(cluster):
    p = srun(cluster, "-n2", "-l", "cat", input="hi\n")
    assert sorted(lines(p.stdout)) == ["0: hi", "1: hi"]  # srun 22.05: stdin to all tasks
    p = srun(cluster, "-n2", "-l", "--input=1", "cat", input="one\n")
    assert lines(p.stdout) == ["1: one"]
    p = srun(cluster, "-N2", "-n4", "-o", "out-%j-%s-%t-%N-%n.txt", "-e", "err-%t.txt", "bash",
             "-c", "echo out $SLURM_PROCID; echo err $SLURM_PROCID >&2")
    assert p.returncode == 0 and p.stdout == "", p.stderr
    outs = sorted(f.name for f in cluster.work.glob("out-*.txt"))
    assert len(outs) == 4 and re.fullmatch(r"out-\d+-0-0-node1-0\.txt", outs[0]), outs
    assert outs[3].endswith("-3-node2-1.txt")
    assert (cluster.work / outs[2]).read_text() == "out 2\n"
    assert (cluster.work / "err-3.txt").read_text() == "err 3\n"
    # -u: chunks as they come (so one task here: chunks of two would mix).
    p = srun(cluster, "-n1", "-u", "-l", "bash", "-c", "printf 'a'; sleep 0.2; printf 'b\\n'")
    assert lines(p.stdout) == ["0: ab"]


def test_multi_prog_distribution_binding(cluster):
    conf = cluster.work / "mp.conf"
    conf.write_text("# ranks and programs\n0 echo zero %t\n1-3 echo rest %t off=%o\n")
    p = srun(cluster, "-n4", "-l", "--multi-prog", str(conf))
    assert sorted(lines(p.stdout)) == ["0: zero 0", "1: rest 1 off=0", "2: rest 2 off=1",
                                       "3: rest 3 off=2"], p.stderr
    p = srun(cluster, "-N2", "-n4", "-l", "--distribution=cyclic", "bash", "-c",
             "echo $SLURMD_NODENAME $SLURM_GTIDS $SLURM_DISTRIBUTION")
    assert sorted(lines(p.stdout)) == ["0: node1 0,2,3 cyclic", "1: node2 1 cyclic",
                                       "2: node1 0,2,3 cyclic", "3: node1 0,2,3 cyclic"]
    p = srun(cluster, "-n2", "-l", "--cpu-bind=map_cpu:1,0", "bash", "-c",
             "grep Cpus_allowed_list /proc/self/status")
    assert sorted(lines(p.stdout)) == ["0: Cpus_allowed_list:\t1", "1: Cpus_allowed_list:\t0"]
    p = srun(cluster, "-n2", "--gres=gpu:2", "-l", "--gpu-bind=single:1", "bash", "-c",
             "echo $CUDA_VISIBLE_DEVICES $SLURM_STEP_GPUS")
    assert sorted(lines(p.stdout)) == ["0: 0 0,1", "1: 1 0,1"], p.stderr
    p = srun(cluster, "-n2", "--gres=gpu:2", "-l", "--gpu-bind=map_gpu:1,0", "bash", "-c",
             "echo $CUDA_VISIBLE_DEVICES")
    assert sorted(lines(p.stdout)) == ["0: 1", "1: 0"]


def test_kill_on_bad_exit_and_wait(cluster):
    p = srun(cluster, "-n3", "-K", "-l", "bash", "-c",
             "if [ $SLURM_PROCID = 1 ]; then exit 4; fi; sleep 30")
    assert p.returncode == 143, p.stderr
    assert "srun: error: node1: task 1: Exited with exit code 4" in p.stderr
    assert re.search(r"0: slurmstepd-node1: error: \*\*\* STEP \d+\.0 ON node1 CANCELLED AT \S+ "
                     r"\*\*\*", p.stdout + p.stderr)
    assert "srun: error: node1: tasks 0,2: Terminated" in p.stderr
    start = time.time()
    p = srun(cluster, "-n2", "-W", "1", "bash", "-c",
             "if [ $SLURM_PROCID = 1 ]; then exit 0; fi; sleep 30")
    assert time.time() - start < 20
    assert "srun: First task exited 1s ago" in p.stderr
    assert p.returncode in (137, 143), p.stderr


def _run_bg(cluster, *args):
    need("srun")
    return subprocess.Popen([str(BIN / "srun")] + list(args), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=cluster.env,
                            cwd=str(cluster.work))


def _wait_line(proc_out, what, timeout=20):
    end = time.time() + timeout
    buf = ""
    while time.time() < end:
        r, _, _ = select.select([proc_out], [], [], 0.2)
        if r:
            chunk = os.read(proc_out.fileno(), 4096).decode()
            if not chunk:
                break
            buf += chunk
            if what in buf:
                return buf
    raise AssertionError("no %r in %r" % (what, buf))


def test_signals(cluster):
    script = ("trap 'echo got INT' INT; trap 'echo got USR1' USR1; echo ready; "
              "while :; do sleep 0.1; done")
    p = _run_bg(cluster, "-n2", "-l", "bash", "-c", script)
    out = _wait_line(p.stdout, "ready")
    if out.count("ready") < 2:
        out += _wait_line(p.stdout, "ready")
    p.send_signal(signal.SIGUSR1)
    out += _wait_line(p.stdout, "got USR1")
    p.send_signal(signal.SIGINT)  # once: status
    time.sleep(1.5)
    assert p.poll() is None, p.communicate()
    p.send_signal(signal.SIGINT)
    time.sleep(0.2)
    p.send_signal(signal.SIGINT)  # twice within a second: abort
    rest, err = p.communicate(timeout=30)
    out += rest
    assert "srun: interrupt (one more within 1 sec to abort)" in err
    assert re.search(r"srun: StepId=\d+\.0 tasks 0-1: running", err), err
    assert "srun: sending Ctrl-C to StepId=" in err and "srun: forcing job termination" in err
    assert "srun: Job step aborted: Waiting up to 4 seconds for job step to finish." in err
    assert re.search(r"STEP \d+\.0 ON node1 CANCELLED AT", out + err), out + err
    assert p.returncode == 137, err
    # SIGTERM: the step ends at once.
    p = _run_bg(cluster, "-n1", "sleep", "300")
    time.sleep(1.0)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=30)
    assert "srun: forcing job termination" in err and p.returncode == 137, err


def test_steps_share_an_allocation(cluster):
    need("salloc")
    script = (
        "srun -n1 bash -c 'echo A $SLURM_STEP_ID $SLURM_CPUS_ON_NODE; sleep 2' &\n"
        "sleep 0.5\n"
        "srun -n1 bash -c 'echo B $SLURM_STEP_ID $SLURM_CPUS_ON_NODE'\n"
        "wait\n"
        "srun -n1 --exact bash -c 'echo C $SLURM_CPUS_ON_NODE; sleep 2' &\n"
        "sleep 0.5\n"
        "srun -n1 --exact bash -c 'echo D $SLURM_CPUS_ON_NODE'\n"
        "wait\n"
        "srun -n1 bash -c 'sleep 2' &\n"
        "sleep 0.5\n"
        "srun -n1 --overlap bash -c 'echo E $SLURM_CPUS_ON_NODE'\n"
        "squeue -s -h -o '%i %j'\n"
        "wait\n")
    p = cluster.run("salloc", "-n2", "bash", "-c", script, timeout=60)
    assert p.returncode == 0, p.stderr
    out = lines(p.stdout)
    assert out[:2] == ["A 0 2", "B 1 2"], p.stdout
    assert re.search(r"srun: Job \d+ step creation temporarily disabled, retrying "
                     r"\(Requested nodes are busy\)", p.stderr)
    assert re.search(r"srun: Step created for job \d+", p.stderr)
    assert "C 1" in out and "D 1" in out and "E 2" in out
    steps = [l for l in out if re.fullmatch(r"\d+\.\d+ \S+", l)]
    assert any(l.endswith(" sleep") or l.endswith(" bash") for l in steps), out


def test_killed_srun_frees_its_step(cluster):
    """srun killed with SIGKILL: its supervisors end the tasks and tell the
    controller, so the allocation's next step is not kept waiting."""
    need("salloc")
    script = ("srun -n1 sleep 300 &\n"
              "sleep 1.5\n"
              "kill -9 $!\n"
              "srun -n1 echo after\n"
              "squeue -s -h -o %i | grep -vc batch; true\n")
    start = time.time()
    p = cluster.run("salloc", "-n1", "bash", "-c", script, timeout=60)
    assert p.returncode == 0, p.stderr
    assert lines(p.stdout) == ["after", "0"], p.stdout + p.stderr
    assert time.time() - start < 30


def test_scancel_step_and_sstat(cluster):
    need("salloc", "scancel", "sstat")
    script = ("srun -n2 bash -c 'x=$(seq 100000 | tail -1); sleep 307' &\n"
              "sleep 1.5\n"
              "sstat -p -n -o JobID,NTasks,MaxRSSNode $SLURM_JOB_ID.0\n"
              "sstat -i -P -n -j $SLURM_JOB_ID.0\n"
              "echo \"pids $(pgrep -d, -f '^sleep 307$')\"\n"
              "sstat -n -j $SLURM_JOB_ID -o JobID\n"
              "scancel $SLURM_JOB_ID.0\n"
              "wait $!\n"
              "echo srun=$?\n")
    p = cluster.run("salloc", "-n2", "bash", "-c", script, timeout=60)
    assert p.returncode == 0, p.stderr
    st = [l for l in lines(p.stdout) if l.count("|") == 3]
    assert len(st) == 1 and re.fullmatch(r"\d+\.0\|2\|node1\|", st[0]), p.stdout
    # -i/--pidformat: the step's processes (both tasks' sleeps among them)
    pidline = next(l for l in lines(p.stdout) if re.fullmatch(r"\d+\.0\|node1\|[\d,]+", l))
    sleeps = next(l for l in lines(p.stdout) if l.startswith("pids "))[5:].split(",")
    assert len(sleeps) == 2 and set(sleeps) <= set(pidline.split("|")[2].split(",")), p.stdout
    # -e: the names sorted, four a line, 19 columns and a space, the last ending the line
    names = cluster.run("sstat", "-e").stdout
    assert names.startswith("AveCPU              AveCPUFreq          AveDiskRead         "
                            "AveDiskWrite       \n"), names
    assert names.split() == sorted(names.split()) and "Pids" in names.split(), names
    # J alone: its first step
    ids = [l.strip() for l in lines(p.stdout) if re.fullmatch(r"\d+\.0\s*", l)]
    assert len(ids) == 1, p.stdout
    assert re.search(r"slurmstepd-node1: error: \*\*\* STEP \d+\.0 ON node1 CANCELLED AT",
                     p.stdout + p.stderr)
    assert "srun=143" in p.stdout or "srun=137" in p.stdout, p.stdout + p.stderr


def test_srun_in_batch_multi_node(cluster):
    script = ("#!/bin/bash\n#SBATCH -N2 -n4\n"
              "srun -l bash -c 'echo $SLURMD_NODENAME $SLURM_STEP_ID'\n"
              "srun -N1 -n1 bash -c 'echo one $SLURM_STEP_NODELIST'\n")
    reply = cluster.submit(script, nodes=2, ntasks=4,
                           env=["PATH=%s:%s" % (BIN, os.environ.get("PATH", "")),
                                "SLURM_CONF=%s" % cluster.conf])
    assert reply["rc"] == 0, reply
    jid = reply["job_id"]
    rec = cluster.wait_job(jid, "COMPLETED", "FAILED", timeout=60)
    out = (cluster.work / ("slurm-%d.out" % jid)).read_text()
    assert cluster.state_of(rec) == "COMPLETED", out
    assert sorted(lines(out)[:4]) == ["0: node1 0", "1: node1 0", "2: node1 0", "3: node2 0"], out
    assert lines(out)[4] == "one node1", out


def _pty_run(cluster, argv, send=(), rows=30, cols=100, timeout=30):
    """Run argv in a pseudo-terminal of rows x cols; feed `send` (when, bytes):
    `when` is a delay in seconds, or bytes the output must show first."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(str(cluster.work))
        os.execve(str(BIN / "srun"), ["srun"] + argv, cluster.env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    out, start, pending = b"", time.time(), list(send)
    while time.time() - start < timeout:
        when = pending[0][0] if pending else None
        if pending and (when in out if isinstance(when, bytes) else time.time() - start >= when):
            os.write(fd, pending.pop(0)[1])
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return out.decode(errors="replace"), os.waitstatus_to_exitcode(status)


def test_pty(cluster):
    need("srun")
    out, rc = _pty_run(cluster, ["--pty", "bash", "-c", "tty; stty size; "
                                 "[ -t 0 ] && echo stdin-is-tty"])
    assert rc == 0, out
    assert re.search(r"/dev/pts/\d+", out) and "30 100" in out and "stdin-is-tty" in out, out
    # Ctrl-C typed on the terminal reaches the task as SIGINT, through its pty.
    out, rc = _pty_run(cluster, ["--pty", "bash", "-c",
                                 "trap 'echo caught; exit 7' INT; echo go; sleep 20"],
                       send=[(b"go", b"\x03")])  # once the trap is set, however loaded the host
    assert "caught" in out and rc == 7, out


PMI2_CLIENT = r'''
import os, socket, sys
fd = int(os.environ["PMI_FD"])
s = socket.socket(fileno=fd)
def v2(cmd, **kv):
    body = "cmd=%s;" % cmd + "".join("%s=%s;" % (k.replace("_", "-"), v) for k, v in kv.items())
    s.sendall(b"%6d" % len(body) + body.encode())
    n = int(s.recv(6))
    data = b""
    while len(data) < n:
        data += s.recv(n - len(data))
    return dict(p.split("=", 1) for p in data.decode().split(";") if "=" in p)
s.sendall(b"cmd=init pmi_version=2 pmi_subversion=0\n")
assert b"response_to_init" in s.recv(100)
r = v2("fullinit", pmirank=os.environ["PMI_RANK"])
rank, size = int(r["rank"]), int(r["size"])
jobid = v2("job-getid")["jobid"]
v2("kvs-put", key="card-%d" % rank, value="addr-of-%d" % rank)
assert v2("kvs-fence")["rc"] == "0"
cards = [v2("kvs-get", key="card-%d" % i)["value"] for i in range(size)]
mapping = v2("info-getjobattr", key="PMI_process_mapping")["value"]
v2("finalize")
print(rank, size, jobid == os.environ["PMI_JOBID"], ",".join(cards), mapping)
'''


MPI_HELLO = r"""
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int rank, size, sum = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("rank %d of %d sum %d\n", rank, size, sum);
    MPI_Finalize();
    return 0;
}
"""


def test_real_mpich(cluster):
    """MPICH (Debian's mpich): MPI_Init through srun --mpi=pmi2 (its simple
    PMI client speaks PMI-1 over PMI_FD), and its own launcher, mpiexec,
    inside an allocation (hydra starts its proxies with srun)."""
    import shutil
    if not shutil.which("mpicc") or not shutil.which("mpiexec"):
        pytest.skip("MPICH is not installed (apt-get install mpich libmpich-dev)")
    src = cluster.work / "hello.c"
    src.write_text(MPI_HELLO)
    exe = cluster.work / "mpi_hello"
    subprocess.run(["mpicc", "-o", str(exe), str(src)], check=True, capture_output=True)
    want = ["rank %d of 4 sum 6" % i for i in range(4)]
    p = srun(cluster, "--mpi=pmi2", "-N2", "-n4", str(exe), timeout=90)
    assert p.returncode == 0 and sorted(lines(p.stdout)) == want, p.stdout + p.stderr
    p = cluster.run("salloc", "-N2", "-n4", "mpiexec", "-n", "4", str(exe), timeout=90)
    assert p.returncode == 0 and sorted(lines(p.stdout)) == want, p.stdout + p.stderr


def test_mpi_pmi2(cluster):
    prog = cluster.work / "pmi2_client.py"
    prog.write_text(PMI2_CLIENT)
    p = srun(cluster, "--mpi=pmi2", "-N2", "-n4", sys.executable, str(prog), timeout=60)
    assert p.returncode == 0, p.stderr
    got = sorted(lines(p.stdout))
    cards = ",".join("addr-of-%d" % i for i in range(4))
    # tasks 3+1 (cons_tres): node 0 holds three, node 1 one
    assert got == ["%d 4 True %s (vector,(0,1,3),(1,1,1))" % (i, cards) for i in range(4)], got


def test_more_nodes_than_tasks_and_default_distribution(cluster):
    # srun 22.05 outside an allocation: a warning, then one node.
    p = srun(cluster, "-N2", "-n1", "bash", "-c", "echo $SLURM_NNODES")
    assert p.returncode == 0 and p.stdout == "1\n", p.stderr
    assert p.stderr == "srun: Warning: can't run 1 processes on 2 nodes, setting nnodes to 1\n"
    # Without -m a step's SLURM_DISTRIBUTION is cyclic when no node gets two tasks.
    need("salloc")
    p = cluster.run("salloc", "-N1", "-n2", "bash", "-c",
                    "srun -n1 printenv SLURM_DISTRIBUTION; srun -n2 printenv SLURM_DISTRIBUTION")
    assert p.returncode == 0 and p.stdout == "cyclic\nblock\nblock\n", (p.stdout, p.stderr)
    # srun's own allocation without -m: no SLURM_DISTRIBUTION at all (22.05.8 side by side)
    p = srun(cluster, "-n1", "bash", "-c", "echo ${SLURM_DISTRIBUTION-unset}")
    assert (p.returncode, p.stdout) == (0, "unset\n"), p.stderr


def test_step_of_cancelled_job_is_aborted(cluster):
    # scancel (or the time limit) under a running srun: 22.05 says the step is
    # aborted, not "Force Terminated".
    p = _run_bg(cluster, "-n1", "bash", "-c", "echo go; sleep 60")
    assert p.stdout.readline() == "go\n"
    jid = [j["job_id"] for j in cluster.jobs().values() if cluster.state_of(j) == "RUNNING"][0]
    assert cluster.run("scancel", str(jid)).returncode == 0
    _, err = p.communicate(timeout=60)
    assert p.returncode == 143, err
    assert re.search(r"^slurmstepd-node1: error: \*\*\* STEP %d\.0 ON node1 CANCELLED AT "
                     r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d \*\*\*$" % jid, err, re.M), err
    assert err.splitlines()[-2:] == [
        "srun: Job step aborted: Waiting up to 4 seconds for job step to finish.",
        "srun: error: node1: task 0: Terminated"], err


def test_srun_propagates_limits(cluster):
    """srun carries its shell's soft limits to the tasks, all of them or the
    --propagate list (22.05.8 side by side: --propagate=NOFILE keeps the
    node's stack size)."""
    show = "'echo $(ulimit -Ss) $(ulimit -Sn) $(env | grep -c ^SLURM_RLIMIT_)'"
    outs = []
    for opt in ("", "--propagate=NOFILE"):
        line = "ulimit -S -s 4096 && ulimit -S -n 555 && exec %s/srun %s bash -c %s" % (
            BIN, opt, show)
        p = subprocess.run(["bash", "-c", line], env=cluster.env, cwd=str(cluster.work),
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        outs.append(p.stdout.split())
    assert outs[0] == ["4096", "555", "0"], outs
    assert outs[1][1:] == ["555", "0"] and outs[1][0] != "4096", outs


def test_srun_mpi_types(cluster):
    """--mpi=list names the types Loom serves; another type is refused with
    srun 22.05.8's five lines before anything is allocated (SLURM_MPI_TYPE
    too); none and pmi2 run."""
    p = cluster.run("srun", "--mpi=list")
    assert (p.returncode, p.stdout) == (0, "MPI plugin types are...\n\tnone\n\tpmi2\n")
    before = len(cluster.rpc("job.info").get("jobs", []))
    for args, env in ((["--mpi=pmix", "true"], None), (["true"], {"SLURM_MPI_TYPE": "pmix"})):
        p = cluster.run("srun", *args, env=env)
        assert p.returncode == 1, p.stderr
        assert p.stderr.splitlines()[-1] == ("srun: error: Invalid MPI type 'pmix', --mpi=list "
                                             "for acceptable types"), p.stderr
        assert len(p.stderr.splitlines()) == 5, p.stderr
    assert len(cluster.rpc("job.info").get("jobs", [])) == before  # nothing was submitted
    assert cluster.run("srun", "--mpi=none", "true").returncode == 0
