"""salloc on a real Loom cluster (conftest `cluster`): the allocation's
environment and Slurm's stderr lines (CLI_SPEC §3, §0.10), exit statuses,
waiting for resources, the allocation ended under the command (scancel),
--no-shell, and the seed 004 way of finding MASTER_ADDR.
"""
import re
import signal
import subprocess
import time

from conftest import BIN, need


def salloc(cluster, *args, **kw):
    need("salloc")
    return cluster.run("salloc", *args, **kw)


def granted(stderr):
    m = re.search(r"^salloc: Granted job allocation (\d+)$", stderr, re.M)
    assert m, stderr
    return int(m.group(1))


def test_allocation_environment(cluster):
    p = salloc(cluster, "-N2", "-n4", "-J", "envtest", "bash", "-c",
               "env | grep ^SLURM_ | sort; "
               "echo MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)")
    assert p.returncode == 0, p.stderr
    jid = granted(p.stderr)
    assert p.stderr.splitlines()[-1] == "salloc: Relinquishing job allocation %d" % jid
    env = dict(l.split("=", 1) for l in p.stdout.splitlines() if "=" in l)
    want = {"SLURM_JOB_ID": str(jid), "SLURM_JOBID": str(jid), "SLURM_JOB_NAME": "envtest",
            "SLURM_JOB_NODELIST": "node[1-2]", "SLURM_NODELIST": "node[1-2]",
            "SLURM_JOB_NUM_NODES": "2", "SLURM_NNODES": "2", "SLURM_NTASKS": "4",
            "SLURM_NPROCS": "4", "SLURM_TASKS_PER_NODE": "3,1",  # as cons_tres: 3+1
            "SLURM_JOB_CPUS_PER_NODE": "3,1", "SLURM_JOB_PARTITION": "debug",
            "SLURM_SUBMIT_DIR": str(cluster.work), "SLURM_CLUSTER_NAME": "loomtest",
            "SLURM_CONF": str(cluster.conf), "MASTER_ADDR": "node1",
            "SLURM_NODE_ALIASES": "(null)"}  # salloc 22.05 sets it so
    for k, v in want.items():
        assert env.get(k) == v, (k, env.get(k), v)
    # cluster:controller address:port:protocol 22.05:select/cons_tres, as salloc 22.05
    port = re.search(r"^SlurmctldPort=(\d+)", cluster.conf.read_text(), re.M).group(1)
    assert re.fullmatch(r"loomtest:[^:]+:%s:9728:109" % port,
                        env.get("SLURM_WORKING_CLUSTER", "")), env
    # Batch-only and task variables do not belong to salloc's shell.
    for k in ("SLURM_PROCID", "SLURM_NODEID", "SLURMD_NODENAME", "SLURM_STEP_ID"):
        assert k not in env, k
    rec = cluster.wait_job(jid, "COMPLETED", timeout=30)
    assert rec["name"] == "envtest"


def test_exit_status_and_default_name(cluster):
    p = salloc(cluster, "-n1", "bash", "-c", "exit 3")
    assert p.returncode == 3
    jid = granted(p.stderr)
    rec = cluster.wait_job(jid, "FAILED", "COMPLETED", timeout=30)
    assert cluster.state_of(rec) == "FAILED" and rec["name"] == "interactive"
    p = salloc(cluster, "-n1", "bash", "-c", "kill -HUP $$")
    assert p.returncode == 0  # killed by HUP/INT/KILL/QUIT: 0 (CLI_SPEC §0.9)
    p = salloc(cluster, "-n1", "no_such_command_xyz")  # salloc 22.05: its words, status 1
    assert p.returncode == 1, p.stderr
    assert p.stderr.splitlines()[1] == ('salloc: error: _fork_command: Unable to find command '
                                        '"no_such_command_xyz"'), p.stderr
    p = salloc(cluster, "-n1", "bash", "-c", "kill -TERM $$")
    assert p.returncode == 1  # another signal: 1, not 128+N
    p = salloc(cluster, "-p", "nosuchpart", "true")
    assert p.returncode == 1
    assert p.stderr == ("salloc: error: Job submit/allocate failed: Invalid partition name "
                        "specified\n"), p.stderr


def test_waits_for_resources(cluster):
    hog = cluster.submit("#!/bin/sh\nsleep 4\n", nodes=2, exclusive="true")
    assert hog["rc"] == 0, hog
    cluster.wait_job(hog["job_id"], "RUNNING")
    p = salloc(cluster, "-n1", "true", timeout=60)
    assert p.returncode == 0, p.stderr
    jid = granted(p.stderr)
    assert p.stderr.splitlines()[:4] == [
        "salloc: Pending job allocation %d" % jid,
        "salloc: job %d queued and waiting for resources" % jid,
        "salloc: job %d has been allocated resources" % jid,
        "salloc: Granted job allocation %d" % jid], p.stderr


def test_revoked_allocation_ends_the_command(cluster):
    need("salloc", "scancel")
    p = subprocess.Popen([str(BIN / "salloc"), "-n1", "bash", "-c",
                          "trap 'echo hangup; exit 9' HUP; echo started; sleep 60 & wait"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=cluster.env, cwd=str(cluster.work))
    assert p.stdout.readline() == "started\n"
    jobs = [j for j in cluster.jobs().values() if cluster.state_of(j) == "RUNNING"]
    assert len(jobs) == 1
    assert cluster.run("scancel", str(jobs[0]["job_id"])).returncode == 0
    out, err = p.communicate(timeout=30)
    assert "salloc: Job allocation %d has been revoked." % jobs[0]["job_id"] in err, err
    assert "hangup" in out and p.returncode == 9, (out, err)
    rec = cluster.wait_job(jobs[0]["job_id"], "CANCELLED", timeout=30)
    assert cluster.state_of(rec) == "CANCELLED"


def test_no_shell_keeps_the_allocation(cluster):
    p = salloc(cluster, "--no-shell", "-n1")
    assert p.returncode == 0, p.stderr
    jid = granted(p.stderr)
    assert "Relinquishing" not in p.stderr
    rec = cluster.job(jid)
    assert cluster.state_of(rec) == "RUNNING" and rec["name"] == "no-shell"
    # A step can still use it, from anywhere, with --jobid.
    s = cluster.run("srun", "--jobid=%d" % jid, "-n1", "bash", "-c", "echo in $SLURM_JOB_ID")
    assert s.stdout == "in %d\n" % jid, s.stderr
    assert cluster.rpc("job.signal", job_id=jid, signal=9, cancel=True)["rc"] == 0
    cluster.wait_job(jid, "CANCELLED", timeout=30)


def _pending_then(cluster, argv, how):
    """Start argv (over the partition's totals: it pends with PartitionConfig),
    then end the wait by a signal or by scancel; (returncode, stderr)."""
    p = subprocess.Popen([str(BIN / argv[0])] + argv[1:], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=cluster.env,
                         cwd=str(cluster.work))
    found = []
    cluster.wait_for(lambda: found.extend(j["job_id"] for j in cluster.jobs().values()
                                          if cluster.state_of(j) == "PENDING") or found,
                     "pending job")
    jid = found[0]
    time.sleep(1.5)  # the pending lines are out
    if how == "scancel":
        assert cluster.run("scancel", str(jid)).returncode == 0
    else:
        p.send_signal(how)
    _, err = p.communicate(timeout=30)
    return jid, p.returncode, err


def test_pending_ended_by_signal_or_scancel(cluster):
    need("salloc", "srun", "scancel")
    jid, rc, err = _pending_then(cluster, ["salloc", "-N9", "true"], signal.SIGINT)
    assert rc == 1 and err.splitlines() == [
        "salloc: Requested partition configuration not available now",
        "salloc: Pending job allocation %d" % jid,
        "salloc: job %d queued and waiting for resources" % jid,
        "salloc: Job allocation %d has been revoked." % jid,
        "salloc: Job aborted due to signal"], err
    jid, rc, err = _pending_then(cluster, ["srun", "-N9", "true"], signal.SIGTERM)
    assert rc == 1 and err.splitlines() == [
        "srun: Requested partition configuration not available now",
        "srun: job %d queued and waiting for resources" % jid,
        "srun: Job allocation %d has been revoked" % jid,
        "srun: Force Terminated JobId=%d" % jid], err
    jid, rc, err = _pending_then(cluster, ["salloc", "-N9", "true"], "scancel")
    assert rc == 1 and err.splitlines()[3:] == [
        "salloc: Job has been cancelled",
        "salloc: Job allocation %d has been revoked." % jid,
        "salloc: error: Job submit/allocate failed: Job/step already completing or completed"], err
    jid, rc, err = _pending_then(cluster, ["srun", "-N9", "true"], "scancel")
    assert rc == 1 and err.splitlines()[2:] == [
        "srun: Job has been cancelled",
        "srun: error: Unable to allocate resources: Job/step already completing or completed"], err


def test_immediate(cluster):
    need("salloc", "srun")
    hog = cluster.submit("#!/bin/sh\nsleep 30\n", nodes=2, exclusive="true")
    cluster.wait_job(hog["job_id"], "RUNNING")
    p = salloc(cluster, "-I", "true")
    jid = int(re.search(r"allocation (\d+) has", p.stderr).group(1))
    assert p.returncode == 1 and p.stderr == (
        "salloc: error: Unable to allocate resources: Requested nodes are busy\n"
        "salloc: Job allocation %d has been revoked.\n" % jid), p.stderr
    p = salloc(cluster, "-I2", "true")
    assert p.returncode == 1 and p.stderr.splitlines()[2:] == [
        "salloc: error: Unable to allocate resources: Connection timed out",
        "salloc: Job allocation %s has been revoked." % p.stderr.split()[4]], p.stderr
    p = cluster.run("srun", "-I", "true")
    assert p.returncode == 1 and p.stderr == (
        "srun: error: Unable to allocate resources: Requested nodes are busy\n"), p.stderr
    cluster.rpc("job.signal", job_id=hog["job_id"], signal=9, cancel=True)


def test_bad_option_exits_255(cluster):
    need("salloc", "srun")
    for cmd in ("salloc", "srun"):
        p = cluster.run(cmd, "--bogus", "true")
        assert p.returncode == 255 and p.stderr == (
            "%s: unrecognized option '--bogus'\nTry \"%s --help\" for more information\n"
            % (cmd, cmd)), p.stderr


def test_sigterm_revokes(cluster):
    # SIGTERM to salloc while its command runs: the job is cancelled, the
    # command gets SIGHUP (status 0), no "Relinquishing" (salloc 22.05).
    need("salloc")
    p = subprocess.Popen([str(BIN / "salloc"), "-n1", "bash", "-c", "echo started; sleep 60"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=cluster.env, cwd=str(cluster.work))
    assert p.stdout.readline() == "started\n"
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=30)
    jid = granted(err)
    assert p.returncode == 0 and err == ("salloc: Granted job allocation %d\n"
                                         "salloc: Job allocation %d has been revoked.\n"
                                         % (jid, jid)), err
    rec = cluster.wait_job(jid, "CANCELLED", timeout=30)
    assert cluster.state_of(rec) == "CANCELLED"
