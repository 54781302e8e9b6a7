"""Jobs on a real Loom cluster (conftest `cluster`): loomctld, two loomd with
fake GPUs, loomstepd and srun. What a job sees and how it ends: the seed 000
script, distinct GPUs for concurrent jobs, the batch environment, the time
limit and cancel lines, and a loomd restarted while a job runs.
"""
import os
import re
import shutil
import signal
import time
from pathlib import Path

import pytest

from conftest import BIN, SOURCE, need

EXAMPLES = SOURCE / "examples"


def job_env(cluster, *extra):
    path = ":".join([str(EXAMPLES / "bin"), str(BIN), os.environ.get("PATH", "/usr/bin:/bin")])
    return ["PATH=" + path, "SLURM_CONF=%s" % cluster.conf, "HOME=" + str(cluster.work)] + list(
        extra)


def submit(cluster, script, **desc):
    desc.setdefault("env", job_env(cluster))
    reply = cluster.submit(script, **desc)
    assert reply["rc"] == 0, reply
    return reply["job_id"]


def output(cluster, job_id, name=None, where=None):
    p = Path(where or cluster.work) / (name or "slurm-%d.out" % job_id)
    return p.read_text() if p.exists() else ""


def wait_output(cluster, job_id, text, timeout=30):
    cluster.wait_for(lambda: text in output(cluster, job_id), "'%s' in job %d's output"
                     % (text, job_id), timeout)


def exit_code(rec):
    v = rec.get("exit_code")
    return v if isinstance(v, int) else None


def test_seed000_job(cluster):
    """The seed 000 job.bash, unchanged: --gres=gpu:1, module load, srun python train.py."""
    need("srun")
    run = cluster.work / "seed000"
    run.mkdir()
    shutil.copy(EXAMPLES / "seed000" / "job.bash", run / "job.bash")
    shutil.copy((EXAMPLES / "seed000" / "train.py").resolve(), run / "train.py")
    script = (run / "job.bash").read_text()
    job_id = submit(cluster, script, name="job.bash", work_dir=str(run), gres="gpu:1")
    rec = cluster.wait_job(job_id, "COMPLETED", "FAILED", "CANCELLED", timeout=120)
    out = output(cluster, job_id, where=run)
    assert cluster.state_of(rec) == "COMPLETED", out
    assert "module: load python/3.10" in out
    assert "epoch 1/3 loss" in out and "final loss" in out
    gpus = [l for l in out.splitlines() if "GPUs:" in l]
    assert gpus and gpus[0].split("GPUs: ")[1] in ("0", "1"), out


def test_concurrent_gpu_jobs_see_distinct_devices(cluster):
    """Four one-GPU jobs on two nodes with two GPUs each: four distinct (node, GPU)."""
    script = ("#!/bin/bash\necho $SLURMD_NODENAME $CUDA_VISIBLE_DEVICES $SLURM_JOB_GPUS\n"
              "sleep 3\n")
    ids = [submit(cluster, script, gres="gpu:1", name="g%d" % i) for i in range(4)]
    for j in ids:
        assert cluster.state_of(cluster.wait_job(j, "COMPLETED", timeout=90)) == "COMPLETED"
    seen = [tuple(output(cluster, j).split()) for j in ids]
    assert all(len(s) == 3 and s[1] == s[2] for s in seen), seen
    assert len({(s[0], s[1]) for s in seen}) == 4, seen
    assert {s[1] for s in seen} == {"0", "1"}


def test_batch_environment(cluster):
    script = "#!/bin/bash\nenv | sort\n"
    job_id = submit(cluster, script, name="envtest", ntasks=2, cpus_per_task=1, gres="gpu:2",
                    env=job_env(cluster, "FROM_SUBMIT=yes"))
    rec = cluster.wait_job(job_id, "COMPLETED", timeout=60)
    env = dict(l.split("=", 1) for l in output(cluster, job_id).splitlines() if "=" in l)
    node = rec["nodes"]
    want = {
        "SLURM_JOB_ID": str(job_id), "SLURM_JOBID": str(job_id), "SLURM_JOB_NAME": "envtest",
        "SLURM_JOB_NODELIST": node, "SLURM_NODELIST": node, "SLURM_JOB_NUM_NODES": "1",
        "SLURM_NNODES": "1", "SLURM_JOB_PARTITION": "debug", "SLURM_NTASKS": "2",
        "SLURM_NPROCS": "2", "SLURM_CPUS_PER_TASK": "1", "SLURM_TASKS_PER_NODE": "2",
        "SLURM_JOB_CPUS_PER_NODE": env.get("SLURM_CPUS_ON_NODE"),
        "SLURM_CLUSTER_NAME": "loomtest", "SLURM_CONF": str(cluster.conf),
        "SLURM_SUBMIT_DIR": str(cluster.work), "SLURMD_NODENAME": node,
        "SLURM_NODEID": "0", "SLURM_PROCID": "0", "SLURM_LOCALID": "0", "SLURM_GTIDS": "0",
        "SLURM_JOB_GPUS": "0,1", "SLURM_GPUS_ON_NODE": "2", "CUDA_VISIBLE_DEVICES": "0,1",
        "SLURM_TOPOLOGY_ADDR": node, "SLURM_TOPOLOGY_ADDR_PATTERN": "node",
        "SLURM_JOB_UID": str(os.getuid()), "SLURM_JOB_USER": cluster.user,
        "ENVIRONMENT": "BATCH", "HOSTNAME": "localhost", "FROM_SUBMIT": "yes",
    }
    for k, v in want.items():
        assert env.get(k) == v, (k, env.get(k), v)
    assert int(env["SLURM_CPUS_ON_NODE"]) >= 2
    assert int(env["SLURM_TASK_PID"]) > 1
    assert "SLURM_ARRAY_JOB_ID" not in env and "SLURM_RESTART_COUNT" not in env


def test_output_and_error_patterns(cluster):
    script = "#!/bin/bash\necho to-out\necho to-err >&2\n"
    job_id = submit(cluster, script, name="pat", std_out="o-%x-%j.txt", std_err="e-%4j.txt")
    cluster.wait_job(job_id, "COMPLETED", timeout=60)
    assert output(cluster, job_id, "o-pat-%d.txt" % job_id) == "to-out\n"
    assert output(cluster, job_id, "e-%04d.txt" % job_id) == "to-err\n"


def test_time_limit_kills_with_slurms_line(cluster):
    script = "#!/bin/bash\ntrap 'echo got SIGTERM' TERM\necho started\nsleep 300 & wait\n"
    job_id = submit(cluster, script, time_limit=1)
    wait_output(cluster, job_id, "started")
    rec = cluster.wait_job(job_id, "TIMEOUT", "COMPLETED", "FAILED", "CANCELLED", timeout=150)
    assert cluster.state_of(rec) == "TIMEOUT"
    lines = output(cluster, job_id).splitlines()
    cancel = [l for l in lines if "CANCELLED AT" in l]
    assert len(cancel) == 1, lines
    assert cancel[0].startswith("slurmstepd-%s: error: *** JOB %d ON %s CANCELLED AT "
                                % (rec["nodes"], job_id, rec["nodes"]))
    assert cancel[0].endswith(" DUE TO TIME LIMIT ***")
    assert "got SIGTERM" in lines


def test_cancel_writes_line(cluster):
    script = "#!/bin/bash\necho started\nsleep 300\n"
    job_id = submit(cluster, script)
    wait_output(cluster, job_id, "started")
    assert cluster.rpc("job.signal", job_id=job_id, signal=9, cancel=True)["rc"] == 0
    rec = cluster.wait_job(job_id, "CANCELLED", timeout=30)
    line = [l for l in output(cluster, job_id).splitlines() if "CANCELLED AT" in l]
    assert len(line) == 1 and line[0].endswith(" ***") and "DUE TO" not in line[0], line
    assert "*** JOB %d ON %s CANCELLED AT " % (job_id, rec["nodes"]) in line[0]


def test_loomd_restart_while_job_runs(cluster):
    script = "#!/bin/bash\necho start\nsleep 5\necho end\n"
    job_id = submit(cluster, script)
    wait_output(cluster, job_id, "start")
    node = cluster.job(job_id)["nodes"]
    cluster.stop_node(node, signal.SIGKILL)
    time.sleep(1)
    cluster.start_node(node)
    rec = cluster.wait_job(job_id, "COMPLETED", "FAILED", "NODE_FAIL", "CANCELLED", timeout=60)
    assert cluster.state_of(rec) == "COMPLETED", rec
    assert exit_code(rec) in (0, None)
    assert output(cluster, job_id) == "start\nend\n"


def test_loomd_restart_reports_exit_code(cluster):
    script = "#!/bin/bash\nsleep 3\nexit 3\n"
    job_id = submit(cluster, script)
    cluster.wait_job(job_id, "RUNNING", timeout=30)
    node = cluster.job(job_id)["nodes"]
    cluster.stop_node(node, signal.SIGKILL)
    time.sleep(4)  # the job ends while its node daemon is down
    cluster.start_node(node)
    rec = cluster.wait_job(job_id, "FAILED", "COMPLETED", "NODE_FAIL", timeout=60)
    assert cluster.state_of(rec) == "FAILED", rec
    assert exit_code(rec) == 3 << 8


def test_srun_tasks_and_exit_code(cluster):
    need("srun")
    script = ("#!/bin/bash\nsrun -l bash -c 'echo $SLURM_PROCID/$SLURM_NTASKS "
              "step=$SLURM_STEP_ID'\nsrun bash -c 'exit 7'\necho rc=$?\n")
    job_id = submit(cluster, script, ntasks=2)
    rec = cluster.wait_job(job_id, "COMPLETED", "FAILED", timeout=60)
    lines = output(cluster, job_id).splitlines()
    assert sorted(lines[:2]) == ["0: 0/2 step=0", "1: 1/2 step=0"], lines
    assert "rc=7" in lines, lines
    assert "srun: error: %s: tasks 0-1: Exited with exit code 7" % rec["nodes"] in lines, lines
    assert cluster.state_of(rec) == "COMPLETED"


def test_requeue_runs_again(cluster):
    script = "#!/bin/bash\necho run ${SLURM_RESTART_COUNT:-0}\nsleep 3\n"
    job_id = submit(cluster, script)
    wait_output(cluster, job_id, "run 0")
    reply = cluster.rpc("job.requeue", job_ids=[job_id])
    assert reply["rc"] == 0, reply
    wait_output(cluster, job_id, "run 1", timeout=60)
    rec = cluster.wait_job(job_id, "COMPLETED", timeout=60)
    assert rec.get("restart_cnt") == 1
    # Slurm 22.05.8 truncates: the rerun's output replaces the first run's.
    assert output(cluster, job_id).splitlines() == ["run 1"]


def test_requeue_line(cluster):
    script = "#!/bin/bash\necho run ${SLURM_RESTART_COUNT:-0}\nsleep 30\n"
    job_id = submit(cluster, script, open_mode="append")
    wait_output(cluster, job_id, "run 0")
    assert cluster.rpc("job.requeue", job_ids=[job_id])["rc"] == 0
    wait_output(cluster, job_id, "run 1", timeout=60)
    lines = output(cluster, job_id).splitlines()
    assert lines[0] == "run 0" and lines[2] == "run 1", lines
    # The first run's node wrote it (the second may run elsewhere).
    assert re.match(r"slurmstepd-(\S+): error: \*\*\* JOB %d ON \1 CANCELLED AT \S+ "
                    r"DUE TO JOB REQUEUE \*\*\*$" % job_id, lines[1]), lines
    assert cluster.rpc("job.signal", job_id=job_id, signal=9, cancel=True)["rc"] == 0
    cluster.wait_job(job_id, "CANCELLED", timeout=30)


def test_seed000_with_sbatch(cluster):
    """`sbatch job.bash` in the seed's directory, as the tutorial says; then squeue."""
    need("sbatch", "srun")
    run = cluster.work / "tutorial"
    run.mkdir()
    shutil.copy(EXAMPLES / "seed000" / "job.bash", run / "job.bash")
    shutil.copy((EXAMPLES / "seed000" / "train.py").resolve(), run / "train.py")
    path = "%s:%s" % (EXAMPLES / "bin", cluster.env["PATH"])
    p = cluster.run("sbatch", "job.bash", cwd=run, env={"PATH": path}, check=True)
    m = re.fullmatch(r"Submitted batch job (\d+)\n", p.stdout)
    assert m, p.stdout
    job_id = int(m.group(1))
    rec = cluster.wait_job(job_id, "COMPLETED", "FAILED", timeout=120)
    out = output(cluster, job_id, where=run)
    assert cluster.state_of(rec) == "COMPLETED", out
    assert "epoch 3/3 loss" in out and "GPUs: " in out
