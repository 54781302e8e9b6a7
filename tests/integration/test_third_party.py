"""Third-party programs that drive Slurm's commands, replayed on Loom.

Each test runs the exact command lines a program runs (read from its public
source) on a two-node Loom cluster with loomdbd, and parses the output the
way that program parses it. Each was compared side by side with Slurm 22.05.8
(bench/slurm_local.sh with a second slurmd, plus slurmdbd) for the same
workload: the outputs are byte for byte the same, ids, times and the test
cluster's configuration (DefMemPerCPU, accounts) aside.

- MPICH's launcher (hydra, Debian's mpich): `mpiexec -n 4 ./hello` inside
  `salloc -N2 -n4` and inside an `sbatch -N2 -n4` script. Hydra reads the
  SLURM_* allocation and starts its proxies with `srun -N 2 -n 2 --input none
  hydra_pmi_proxy ...` (logged here by an srun wrapper first in PATH); the
  allocation is 3+1 tasks as cons_tres lays it out, every rank runs on the
  node SLURM_TASKS_PER_NODE puts it on (ranks 0-2 node1, 3 node2), a rank's exit
  code is mpiexec's, then salloc's or the job's.
- JupyterHub batchspawner (SlurmSpawner): the job script on stdin of
  `sbatch --parsable` (#SBATCH --export=LIST --get-user-env=L ...), the id as
  the last line cut at ';', `squeue -h -j ID -o '%T %B'` matched with its
  state and exec-host regexes, `scancel ID`.
- Open OnDemand's Slurm adapter (ood_core): `sbatch ... --export NONE
  --parsable` with SBATCH_EXPORT=NONE and the script on stdin (optionally
  -M CLUSTER: 'ID;CLUSTER'), `squeue --all --states=all --noconvert -o
  '\\x1e%a\\x1f%A...'` read record by record after two header records,
  `scontrol hold|release ID`, `scancel ID`, 'Invalid job id specified'.
- prometheus slurm_exporter (vpenso and its SckyzO fork): sinfo -h -o '%C',
  '%D|%T|%b', '%R,%C', '%R|%D|%T|%b', -N -O with and without ': ' widths,
  --Format='Nodes: ,GresUsed:' with the literal quotes Go passes (the bad
  first field reported, its suffix still printed), squeue
  -a -r -h -o '%A|%T|%r' and -O 'JobID:|,...' , sshare -a -P -n -o ...,
  sacct -P -n --starttime --endtime --format ... --state ..., sdiag.
- reportseff and Princeton's jobstats: `sacct --helpformat`, `sacct -P -n
  --delimiter=^|^ --format=... --jobs=A,B_1,C.0` split on the delimiter,
  `sacct -P -X -n -o jobidraw,start,end,cluster,reqtres,admincomment,...
  -j ID`; ReqMem is the job's whole request as 22.05 prints it (no 'c').
"""
import os
import pwd
import re
import shutil
import subprocess
import time
from datetime import datetime

import pytest

from conftest import BIN, need
from test_acct_link import acct_beside

TIMEOUT = 60

MPI_HELLO = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* The node a rank runs on: SLURMD_NODENAME in its parent's (the hydra proxy's)
 * environment; the rank's own copy can come from mpiexec's environment. */
static void node_of_parent(char *out, size_t n)
{
    char path[64], buf[65536];
    snprintf(out, n, "?");
    snprintf(path, sizeof path, "/proc/%d/environ", (int)getppid());
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = 0;
    for (size_t i = 0; i < len; i += strlen(buf + i) + 1)
        if (!strncmp(buf + i, "SLURMD_NODENAME=", 16))
            snprintf(out, n, "%s", buf + i + 16);
}
int main(int argc, char **argv)
{
    int rank, size, sum = 0;
    char node[64];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    node_of_parent(node, sizeof node);
    printf("rank %d of %d sum %d node %s\n", rank, size, sum, node);
    fflush(stdout);
    MPI_Finalize();
    return argc > 1 && rank == atoi(argv[1]) ? 3 : 0;
}
"""


@pytest.fixture
def tp(make_cluster):
    """Two 4-CPU nodes, loomdbd on SQLite, MinJobAge=300."""
    need("loomdbd", "sacct", "sbatch", "squeue", "scancel", "scontrol", "sinfo", "salloc", "sdiag")
    with acct_beside(make_cluster, cpus=4, gpus=0) as (c, _):
        yield c


def run(c, *argv, env=None, input=None, cwd=None):
    """An argv as the programs pass it (no shell), commands from the build."""
    e = dict(c.env, **(env or {}))
    return subprocess.run([str(BIN / argv[0])] + list(argv[1:]), capture_output=True, text=True,
                          env=e, input=input, cwd=str(cwd or c.work), timeout=TIMEOUT)


def until(what, fn, timeout=TIMEOUT):
    deadline = time.time() + timeout
    while time.time() < deadline:
        got = fn()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError("timed out waiting for " + what)


def wait_done(c, *ids):
    until("jobs %s to end" % (ids,), lambda: all(
        c.job(i) and c.state_of(c.job(i)) not in ("PENDING", "RUNNING")
        and "COMPLETING" not in c.job(i).get("state", []) for i in ids))


def in_sacct(c, *ids):
    """Wait until sacct knows the jobs' final states (loomdbd is fed in rounds)."""
    def ok():
        p = run(c, "sacct", "-X", "-n", "-P", "-o", "JobIDRaw,State", "-j",
                ",".join(map(str, ids)))
        states = dict(l.split("|", 1) for l in p.stdout.splitlines() if "|" in l)
        return all(states.get(str(i), "RUNNING") not in ("RUNNING", "PENDING") for i in ids)
    until("sacct to know %s" % (ids,), ok)


# ---- MPICH's mpiexec (hydra) -----------------------------------------------------------

def _tasks_per_node(value):
    """'2(x2)' or '3,1' -> [2, 2] or [3, 1]."""
    out = []
    for part in value.split(","):
        m = re.fullmatch(r"(\d+)(?:\(x(\d+)\))?", part)
        out += [int(m.group(1))] * int(m.group(2) or 1)
    return out


def _check_ranks(stdout, tpn, nranks=4):
    """Every rank once, each on the node hydra's block layout over
    SLURM_TASKS_PER_NODE gives it (ranks beyond the slots wrap around)."""
    rows = sorted(re.findall(r"^rank (\d+) of (\d+) sum (\d+) node (\S+)$", stdout, re.M),
                  key=lambda r: int(r[0]))
    assert [int(r[0]) for r in rows] == list(range(nranks)), stdout
    total = sum(range(nranks))
    assert all(int(r[1]) == nranks and int(r[2]) == total for r in rows), stdout
    slots = [n for i, k in enumerate(tpn) for n in ["node%d" % (i + 1)] * k]
    assert [r[3] for r in rows] == [slots[i % len(slots)] for i in range(nranks)], (stdout, tpn)


def test_mpich_mpiexec_in_salloc_and_sbatch(tp):
    if not shutil.which("mpicc") or not shutil.which("mpiexec"):
        pytest.skip("MPICH is not installed (apt-get install mpich libmpich-dev)")
    c = tp
    (c.work / "hello.c").write_text(MPI_HELLO)
    subprocess.run(["mpicc", "-o", str(c.work / "hello"), str(c.work / "hello.c")], check=True,
                   capture_output=True)
    wrap = c.root / "wrap"
    wrap.mkdir()
    log = c.root / "srun.log"
    (wrap / "srun").write_text("#!/bin/sh\necho \"$*\" >> %s\nexec %s \"$@\"\n"
                               % (log, BIN / "srun"))
    (wrap / "srun").chmod(0o755)
    env = {"PATH": "%s:%s" % (wrap, c.env["PATH"])}
    show_tpn = "echo TPN=$SLURM_TASKS_PER_NODE; "
    # salloc: all ranks, the proxies through srun, then a rank's exit code.
    p = run(c, "salloc", "-N2", "-n4", "bash", "-c",
            show_tpn + "mpiexec -n 4 ./hello; mpiexec -n 4 ./hello 2", env=env)
    assert p.returncode == 3, p.stdout + p.stderr
    tpn = _tasks_per_node(re.search(r"^TPN=(\S+)$", p.stdout, re.M).group(1))
    assert tpn == [3, 1], p.stdout  # as cons_tres lays out -N2 -n4 on 4-CPU nodes
    ranks = [l for l in p.stdout.splitlines() if l.startswith("rank ")]
    assert len(ranks) == 8, p.stdout
    _check_ranks("\n".join(ranks[:4]) + "\n", tpn)
    _check_ranks("\n".join(ranks[4:]) + "\n", tpn)
    assert len(log.read_text().splitlines()) == 2, log.read_text()
    for line in log.read_text().splitlines():
        assert re.match(r"-N 2 -n 2 --input none \S*hydra_pmi_proxy --control-port \S+ "
                        r"--rmk slurm --launcher slurm ", line), line
    # sbatch: the same inside a batch script; the job ends with mpiexec's code.
    script = ("#!/bin/bash\n#SBATCH -N2 -n4 -o mpi-%j.out\n" + show_tpn +
              "mpiexec -n 4 ./hello\necho \"mpiexec rc=$?\"\nmpiexec -n 4 ./hello 1\n")
    p = run(c, "sbatch", "--parsable", env=env, input=script)
    assert p.returncode == 0, p.stderr
    jid = int(p.stdout.strip())
    rec = c.wait_job(jid, "COMPLETED", "FAILED", timeout=TIMEOUT)
    out = (c.work / ("mpi-%d.out" % jid)).read_text()
    assert c.state_of(rec) == "FAILED" and rec["exit_code"] == 3 << 8, (rec, out)
    tpn = _tasks_per_node(re.search(r"^TPN=(\S+)$", out, re.M).group(1))
    lines = out.splitlines()
    cut = lines.index("mpiexec rc=0")
    _check_ranks("\n".join(l for l in lines[:cut] if l.startswith("rank ")) + "\n", tpn)
    _check_ranks("\n".join(l for l in lines[cut:] if l.startswith("rank ")) + "\n", tpn)
    p = run(c, "scontrol", "show", "job", str(jid))
    assert "ExitCode=3:0" in p.stdout, p.stdout


# ---- JupyterHub batchspawner (SlurmSpawner) -------------------------------------------

SPAWNER_SCRIPT = """#!/bin/bash
#SBATCH --output={home}/jupyterhub_slurmspawner_%j.log
#SBATCH --job-name=spawner-jupyterhub
#SBATCH --chdir={home}
#SBATCH --export=PATH,LANG,JUPYTERHUB_API_TOKEN,USER,HOME,SHELL
#SBATCH --get-user-env=L
#SBATCH --partition=debug
#SBATCH --time=1:00:00
#SBATCH --mem=100
#SBATCH --cpus-per-task=1

set -euo pipefail

trap 'echo SIGTERM received' TERM
echo "token=${{JUPYTERHUB_API_TOKEN:-unset}} other=${{OTHER:-unset}}"
which bash
srun bash -c 'echo "step token=$JUPYTERHUB_API_TOKEN"; exec sleep 120'
echo "jupyterhub-singleuser ended gracefully"
"""


def test_batchspawner(tp):
    c = tp
    home = c.work / "home"
    home.mkdir()
    p = run(c, "sbatch", "--parsable", input=SPAWNER_SCRIPT.format(home=home),
            env={"JUPYTERHUB_API_TOKEN": "tok123", "OTHER": "x"})
    assert p.returncode == 0, p.stderr
    jid = p.stdout.splitlines()[-1].split(";")[0]  # SlurmSpawner.parse_job_id
    int(jid)
    query = lambda: run(c, "squeue", "-h", "-j", jid, "-o", "%T %B").stdout  # noqa: E731
    status = until("the spawner job to run", lambda: (
        lambda s: s if re.search(r"^(?:RUNNING|COMPLETING)", s) else None)(query()))
    assert not re.search(r"^(?:PENDING|CONFIGURING)", status)
    host = re.search(r"\s+((?:[\w_-]+\.?)+)$", status).group(1)  # state_exechost_re
    assert host in c.node_names and status == "RUNNING %s\n" % host, status
    log = home / ("jupyterhub_slurmspawner_%s.log" % jid)
    until("the step to start", lambda: log.exists() and "step token" in log.read_text())
    assert log.read_text().splitlines()[:3] == ["token=tok123 other=unset", shutil.which("bash"),
                                                "step token=tok123"], log.read_text()
    assert run(c, "scancel", jid).returncode == 0
    wait_done(c, int(jid))
    assert query() == ""  # squeue -j without -t: finished jobs are not listed (22.05)


# ---- Open OnDemand's Slurm adapter (ood_core) ------------------------------------------

US, RS = "\x1f", "\x1e"
OOD_FIELDS = [  # all_squeue_fields, in ood_core's order
    ("account", "%a"), ("job_id", "%A"), ("exec_host", "%B"), ("min_cpus", "%c"),
    ("cpus", "%C"), ("min_tmp_disk", "%d"), ("nodes", "%D"), ("end_time", "%e"),
    ("dependency", "%E"), ("features", "%f"), ("array_job_id", "%F"), ("group_name", "%g"),
    ("group_id", "%G"), ("over_subscribe", "%h"), ("sockets_per_node", "%H"),
    ("array_job_task_id", "%i"), ("cores_per_socket", "%I"), ("job_name", "%j"),
    ("threads_per_core", "%J"), ("comment", "%k"), ("array_task_id", "%K"),
    ("time_limit", "%l"), ("time_left", "%L"), ("min_memory", "%m"), ("time_used", "%M"),
    ("req_node", "%n"), ("node_list", "%N"), ("command", "%o"), ("contiguous", "%O"),
    ("qos", "%q"), ("partition", "%P"), ("priority", "%Q"), ("reason", "%r"),
    ("start_time", "%S"), ("state_compact", "%t"), ("state", "%T"), ("user", "%u"),
    ("user_id", "%U"), ("reservation", "%v"), ("submit_time", "%V"), ("wckey", "%w"),
    ("licenses", "%W"), ("excluded_nodes", "%x"), ("core_specialization", "%X"),
    ("nice", "%y"), ("scheduled_nodes", "%Y"), ("sockets_cores_threads", "%z"),
    ("work_dir", "%Z"), ("gres", "%b")]


def ood_get_jobs(c, job_id="", cluster=None, fields=OOD_FIELDS):
    args = ["squeue", "--all", "--states=all", "--noconvert",
            "-o", RS + US.join(f for _, f in fields)]
    if job_id:
        args += ["-j", job_id]
    if cluster:
        args += ["-M", cluster]
    p = run(c, *args)
    if p.returncode != 0:
        return p
    records = p.stdout.split(RS)[2:]  # advance_past_squeue_header!
    keys = [k for k, _ in fields]
    return [dict(zip(keys, r.rstrip(RS).strip().split(US))) for r in records
            if r.strip().split(US) != [""]]


def duration(text):  # ood_core duration_in_seconds
    t, _, days = text.partition("-")[::-1] if "-" in text else (text, "", "0")
    secs = 0
    for v in t.split(":"):
        secs = secs * 60 + int(v)
    return int(days or 0) * 86400 + secs


def test_ood_adapter(tp):
    c = tp
    script = "#!/bin/bash\necho home=${HOME:-unset} foo=${FOO:-unset}\nsleep 120\n"
    args = ["sbatch", "-J", "ood_app", "-o", str(c.work / "ood-%j.out"), "-t", "01:00:00",
            "--export", "NONE", "--parsable"]
    p = run(c, *args, "-M", "loomtest", input=script,
            env={"SBATCH_EXPORT": "NONE", "FOO": "1"})
    assert p.returncode == 0 and re.fullmatch(r"\d+;loomtest\n", p.stdout), (p.stdout, p.stderr)
    jid = p.stdout.strip().split(";")[0]
    job = until("the OOD job to run", lambda: (
        lambda js: js[0] if js and js[0]["state_compact"] == "R" else None)(
            ood_get_jobs(c, jid)))
    assert job["job_id"] == jid and job["array_job_task_id"] == jid, job
    assert job["job_name"] == "ood_app" and job["partition"] == "debug", job
    assert job["node_list"] in c.node_names and job["exec_host"] == job["node_list"], job
    assert job["user"] == c.user and job["cpus"] == "1" and job["nodes"] == "1", job
    assert duration(job["time_limit"]) == 3600 and 0 <= duration(job["time_used"]) < 60, job
    datetime.strptime(job["submit_time"], "%Y-%m-%dT%H:%M:%S")
    datetime.strptime(job["start_time"], "%Y-%m-%dT%H:%M:%S")
    assert job["gres"] == "N/A" and job["work_dir"] == str(c.work), job
    # --export NONE: the user's login environment (HOME, a login PATH), as
    # slurmd loads it, under SLURM_EXPORT_ENV/SLURM_GET_USER_ENV; FOO not sent.
    out = c.work / ("ood-%s.out" % jid)
    until("the job's first line", lambda: out.exists() and out.read_text())
    me = pwd.getpwuid(os.getuid())
    if os.path.basename(me.pw_shell) in ("bash", "sh", "dash", "zsh", "ksh") and os.access(
            me.pw_shell, os.X_OK):  # a user without a login shell has no login environment
        assert out.read_text() == "home=%s foo=unset\n" % me.pw_dir
    assert out.read_text().endswith(" foo=unset\n"), out.read_text()
    # The status query (attrs job_id, array_job_task_id, state_compact) with -M.
    few = [f for f in OOD_FIELDS if f[0] in ("job_id", "array_job_task_id", "state_compact")]
    assert ood_get_jobs(c, jid, "loomtest", few) == [
        {"job_id": jid, "array_job_task_id": jid, "state_compact": "R"}]
    # hold / release of a pending job (waiting for its begin time), delete.
    p = run(c, *args, "--begin=now+3600", input=script, env={"SBATCH_EXPORT": "NONE"})
    held = p.stdout.strip().split(";")[0]
    assert ood_get_jobs(c, held)[0]["state_compact"] == "PD"
    assert run(c, "scontrol", "hold", held).returncode == 0
    job = ood_get_jobs(c, held)[0]
    assert (job["state_compact"], job["reason"], job["node_list"]) == ("PD", "JobHeldAdmin", ""), job
    assert run(c, "scontrol", "release", held).returncode == 0
    assert ood_get_jobs(c, held)[0]["state_compact"] == "PD"
    for j in (jid, held):
        assert run(c, "scancel", j).returncode == 0
    wait_done(c, int(jid), int(held))
    assert [j["state_compact"] for j in ood_get_jobs(c, jid)] == ["CA"]
    # A job the controller no longer knows: ood_core treats it as completed.
    p = ood_get_jobs(c, "999999")
    assert p.returncode == 1 and "Invalid job id specified" in p.stderr, p
    for verb in ("hold", "release"):
        p = run(c, "scontrol", verb, "999999")
        assert p.returncode == 1 and "Invalid job id specified" in p.stderr, p.stderr
    # An interactive job's exec_host (%B) is the host salloc ran on, its
    # AllocNode (squeue 22.05), not a node of the allocation.
    p = run(c, "salloc", "-N1", "bash", "-c", "squeue -h -j $SLURM_JOB_ID -o %B; "
            "scontrol show job $SLURM_JOB_ID")
    alloc, sid = re.search(r"AllocNode:Sid=([^:\s]+):(\d+)", p.stdout).groups()
    assert p.stdout.split("\n", 1)[0] == alloc and alloc not in c.node_names, p.stdout
    assert int(sid) == os.getsid(0), p.stdout  # salloc's session: this test's
    # Every job of the queue parses into the same fields.
    jobs = ood_get_jobs(c)
    assert jobs and all(len(j) == len(OOD_FIELDS) for j in jobs), jobs


# ---- prometheus slurm_exporter ------------------------------------------------------------

def test_prometheus_slurm_exporter(tp):
    c = tp
    run_ = run(c, "sbatch", "--parsable", "-n2", "--wrap", "sleep 120").stdout.strip()
    held = run(c, "sbatch", "--parsable", "-H", "--wrap", "true").stdout.strip()
    failed = run(c, "sbatch", "--parsable", "--wrap", "exit 2").stdout.strip()
    c.wait_job(int(run_), "RUNNING")
    wait_done(c, int(failed))
    # cpus.go: one A/I/O/T line.
    p = run(c, "sinfo", "-h", "-o", "%C")
    assert p.stdout == "2/6/0/8\n", p.stdout
    # nodes.go: '%D|%T|%b' and the per-partition '%R|%D|%T|%b', '%R,%C'.
    assert run(c, "sinfo", "-h", "-o", "%D|%T|%b").stdout == "1|mixed|(null)\n1|idle|(null)\n"
    assert run(c, "sinfo", "-h", "-o", "%R|%D|%T|%b").stdout == (
        "debug|1|mixed|(null)\ndebug|1|idle|(null)\n")
    assert run(c, "sinfo", "-h", "-o", "%R,%C").stdout == "debug,2/6/0/8\n"
    # queue.go: '%A|%T|%r' with every state, and the fork's '%P|%T|%C|%r|%u'.
    p = run(c, "squeue", "-a", "-r", "-h", "-o", "%A|%T|%r", "--states=all")
    rows = {l.split("|")[0]: l.split("|")[1:] for l in p.stdout.splitlines()}
    assert rows[run_] == ["RUNNING", "None"] and rows[held] == ["PENDING", "JobHeldUser"]
    assert rows[failed] == ["FAILED", "NonZeroExitCode"], rows
    p = run(c, "squeue", "-h", "-o", "%P|%T|%C|%r|%u", "--states=all")
    assert "debug|RUNNING|2|None|%s" % c.user in p.stdout.splitlines(), p.stdout
    # accounts/users (SckyzO's consolidated query): '|' suffixes, no widths.
    p = run(c, "squeue", "-a", "-r", "-h", "-O",
            "JobID:|,Account:|,UserName:|,Partition:|,State:|,NumNodes:|,NumCPUs:|,tres-alloc:")
    rows = [l.split("|") for l in p.stdout.splitlines()]
    assert [run_, "root", c.user, "debug", "RUNNING", "1", "2",
            "cpu=2,mem=200M,node=1,billing=2"] in rows, p.stdout
    # node.go: fixed 20-wide -O columns split on blanks, and the ': ' variant.
    p = run(c, "sinfo", "-h", "-N", "-O", "NodeList,AllocMem,Memory,CPUsState,Gres,StateLong")
    got = sorted(l.split() for l in p.stdout.splitlines())
    assert [g[0] for g in got] == ["node1", "node2"] and all(len(g) == 6 for g in got), got
    assert sorted(g[3] for g in got) == ["0/4/0/4", "2/2/0/4"], got
    p = run(c, "sinfo", "-h", "-N", "-O", "NodeList: ,AllocMem: ,Memory: ,CPUsState: ,"
            "StateLong: ,Partition: ,Gres: ,GresUsed:")
    assert sorted(p.stdout.splitlines()) == [
        "node1 200 4000 2/2/0/4 mixed debug* (null) (null)",
        "node2 0 4000 0/4/0/4 idle debug* (null) (null)"], p.stdout
    # gpus.go passes the quotes to sinfo (exec, no shell): 22.05 reports the
    # first field and prints the rest; the exporter finds no "gpu:" and counts 0.
    p = run(c, "sinfo", "-a", "-h", "--Format='Nodes: ,GresUsed:'", "--state=allocated")
    assert p.returncode == 0 and p.stdout == " (null)'\n", (p.stdout, p.stderr)
    assert p.stderr == "sinfo: error: Invalid job format specification: 'Nodes\n", p.stderr
    p = run(c, "sinfo", "-a", "-h", "--Format=Nodes: ,Gres: ,GresUsed:", "--state=idle,allocated")
    assert p.stdout == "2 (null) (null)\n", p.stdout  # one line: the fields are the same
    # node_drain.go: '%N|%E|%H|%T' per node.
    p = run(c, "sinfo", "-h", "-N", "-o", "%N|%E|%H|%T")
    assert sorted(p.stdout.splitlines()) == ["node1|none|Unknown|mixed",
                                             "node2|none|Unknown|idle"], p.stdout
    # fairshare.go: sshare, parent rows skipped by the exporter.
    p = run(c, "sshare", "-a", "-P", "-n", "-o",
            "Account,User,RawShares,NormShares,RawUsage,NormUsage,FairShare")
    assert p.returncode == 0 and all(len(l.split("|")) == 7 for l in p.stdout.splitlines()), p
    # scheduler.go: sdiag every scrape (vpenso's exporter exits when it cannot
    # run it), its figures read with regexes.
    p = run(c, "sdiag")
    assert p.returncode == 0 and p.stderr == "", p.stderr
    for key in ("Server thread count", "Agent queue size", "DBD Agent queue size",
                "Last cycle", "Last queue length", "Last depth cycle",
                r"Total backfilled jobs \(since last slurm start\)", "Jobs running"):
        assert re.search(r"%s:\s+\d+" % key, p.stdout), key
    counts = dict(re.findall(r"^Jobs (\w+):\s+(\d+)$", p.stdout, re.M))
    assert int(counts["submitted"]) >= 3 and counts["running"] == "1", p.stdout
    assert int(counts["failed"]) >= 1 and counts["pending"] == "1", p.stdout
    # sacct_efficiency.go: the window with both ends and a state list.
    in_sacct(c, int(failed))
    now = datetime.now()
    p = run(c, "sacct", "-P", "-n", "--starttime",
            now.replace(hour=0, minute=0, second=0).strftime("%Y-%m-%dT%H:%M:%S"),
            "--endtime", (now.replace(microsecond=0)).strftime("%Y-%m-%dT%H:%M:%S"),
            "--format", "JobID,User,Account,AllocCPUS,Elapsed,TotalCPU,CPUTime,MaxRSS,ReqMem",
            "--state", "COMPLETED,FAILED,TIMEOUT,CANCELLED")
    rows = [l.split("|") for l in p.stdout.splitlines()]
    assert [r[0] for r in rows] == [failed, failed + ".batch"], p.stdout
    assert rows[0][1:4] == [c.user, "root", "1"] and rows[0][8] == "100M", rows
    run(c, "scancel", run_, held)


# ---- reportseff and jobstats ----------------------------------------------------------------

REPORTSEFF_COLS = ["JobID", "JobIDRaw", "State", "Elapsed", "TotalCPU", "AllocCPUS", "REQMEM",
                   "NNodes", "MaxRSS", "Timelimit"]
JOBSTATS_COLS = ("jobidraw,start,end,cluster,reqtres,admincomment,user,account,state,nnodes,"
                 "ncpus,reqmem,qos,partition,timelimitraw,jobname")


def test_reportseff_and_jobstats(tp):
    c = tp
    fmt = run(c, "sacct", "--helpformat").stdout.split()  # get_valid_formats
    assert all(col.lower() in (f.lower() for f in fmt) for col in REPORTSEFF_COLS), fmt
    steps = run(c, "sbatch", "--parsable", "-n2", "--mem-per-cpu=100", "-t", "5", "--wrap",
                "srun -n2 true; srun -n1 sleep 1").stdout.strip()
    arr = run(c, "sbatch", "--parsable", "-a", "0-1", "--wrap", "exit $SLURM_ARRAY_TASK_ID"
              ).stdout.strip()
    runs = run(c, "sbatch", "--parsable", "-t", "10", "--wrap", "sleep 120").stdout.strip()
    c.wait_job(int(runs), "RUNNING")
    until("the array's tasks", lambda: len(c.jobs()) >= 4)
    ids = [int(steps)] + [j for j, r in c.jobs().items() if r.get("array_job_id") == int(arr)]
    wait_done(c, *ids)
    in_sacct(c, *ids)
    p = run(c, "sacct", "-P", "-n", "--delimiter=^|^", "--format=" + ",".join(REPORTSEFF_COLS),
            "--jobs=%s,%s_1,%s.0,%s" % (steps, arr, steps, runs))
    rows = [dict(zip(REPORTSEFF_COLS, re.split(r"\^\|\^", l))) for l in p.stdout.splitlines()]
    by_id = {r["JobID"]: r for r in rows}
    assert set(by_id) >= {steps, steps + ".batch", steps + ".0", steps + ".1", arr + "_1",
                          arr + "_1.batch", runs, runs + ".batch"}, p.stdout
    assert by_id[steps]["REQMEM"] == "200M" and by_id[steps]["AllocCPUS"] == "2", by_id[steps]
    assert by_id[steps]["Timelimit"] == "00:05:00" and by_id[steps]["State"] == "COMPLETED"
    assert by_id[arr + "_1"]["State"] == "FAILED" and by_id[arr + "_1"]["REQMEM"] == "100M"
    # A running job: Elapsed so far (not its time limit), its batch step RUNNING.
    r, b = by_id[runs], by_id[runs + ".batch"]
    assert r["State"] == b["State"] == "RUNNING" and r["Timelimit"] == "00:10:00", (r, b)
    assert duration(r["Elapsed"]) < 60 and duration(b["Elapsed"]) < 60, (r, b)
    # jobstats: one allocation line, '|' separated, End 'Unknown' while running.
    for jid, state, end in ((steps, "COMPLETED", None), (runs, "RUNNING", "Unknown")):
        p = run(c, "sacct", "-P", "-X", "-n", "-o", JOBSTATS_COLS, "-j", jid)
        f = dict(zip(JOBSTATS_COLS.split(","), p.stdout.rstrip("\n").split("|")))
        assert p.stdout.count("\n") == 1 and f["jobidraw"] == jid and f["state"] == state, p
        assert f["cluster"] == "loomtest" and f["user"] == c.user and f["account"] == "root", f
        assert end is None or f["end"] == end, f
        assert f["end"] == "Unknown" or datetime.strptime(f["end"], "%Y-%m-%dT%H:%M:%S"), f
    p = run(c, "sacct", "-P", "-X", "-n", "-o", JOBSTATS_COLS, "-j", steps, "-M", "loomtest")
    f = dict(zip(JOBSTATS_COLS.split(","), p.stdout.rstrip("\n").split("|")))
    # jobstats passes -M CLUSTER: another cluster's name lists nothing (rc 0).
    p = run(c, "sacct", "-P", "-X", "-n", "-o", JOBSTATS_COLS, "-j", steps, "-M", "della")
    assert p.returncode == 0 and p.stdout == "", p
    assert f["reqtres"] == "billing=2,cpu=2,mem=200M,node=1" and f["reqmem"] == "200M", f
    assert (f["nnodes"], f["ncpus"], f["timelimitraw"], f["qos"]) == ("1", "2", "5", "normal"), f
    run(c, "scancel", runs)
    wait_done(c, int(runs))
    in_sacct(c, int(runs))
    p = run(c, "sacct", "-P", "-n", "-o", "JobID,State", "-j", runs)
    assert p.stdout.splitlines() == ["%s|CANCELLED by %d" % (runs, os.getuid()),
                                     "%s.batch|CANCELLED" % runs], p.stdout
