"""The command lines that workflow tools run against Slurm, replayed on Loom.

Each case runs a tool's exact command line (through the shell, as the tool
does, where it does) on a real Loom cluster with loomdbd, and parses the
output the way that tool's source parses it. The tools, read from their
public sources:

- submitit (facebookincubator/submitit, submitit/slurm/slurm.py): an sbatch
  file of sorted `#SBATCH --key=value` lines (arrays as --array=0-N%P with
  %A_%a output names), job id by the regex `job (?P<id>[0-9]+)`, state by
  `sacct -o JobID,State,NodeList --parsable2 -j A -j B` read by header name,
  with pending arrays as `12_[0-3%2]` expanded by its read_job_id.
- dask-jobqueue (dask_jobqueue/slurm.py): `#SBATCH -J/-e/-o/-p/-n 1/
  --cpus-per-task/--mem/-t` with %J in the file names, `JOB_ID=${SLURM_JOB_ID%;*}`,
  job id as the first number sbatch prints, `scancel ID`.
- Parsl (parsl/providers/slurm/slurm.py): the `sacct -X` probe, `sacct -X
  --noheader --format=jobid,state%20 --job 'A,B'` split on blanks (so
  'CANCELLED by 0' is CANCELLED), the squeue fallback `squeue --noheader
  --format='%i %t' --job 'A,B'`, `scancel A B`.
- Nextflow (SlurmExecutor.groovy): `.command.run` with `#SBATCH -J nf-..`,
  `-o .command.log`, `--no-requeue`, `--signal B:USR2@30`, `-c`, `-t HH:mm:ss`,
  `--mem 100M`, `-p`; `sbatch .command.run` (or the script on stdin); status
  from `squeue --noheader -o '%i %t' -t all -p P -u USER`, two columns a line.
- snakemake-executor-plugin-slurm (snakemake >= 8): `sbatch --parsable
  --job-name UUID ... --cluster C` cut at ';', `sacct -X --parsable2 --clusters
  all --noheader --format=JobIdRaw,State --starttime T --endtime now --name
  UUID` read with csv (first word of State), `squeue --format=%i|%T
  --states=all --noheader --name UUID`, MinJobAge from `scontrol show config`,
  `scancel IDS --clusters=all`; snakemake 7's built-in executor: `sinfo -o %P`,
  `sacctmgr -n -s list user U format=account%20`, `sacct -P -n
  --format=JobIdRaw,State -j ID`, `scontrol show jobid -dd ID`.
- Toil (src/toil/batchSystems/slurm.py): `sinfo -a -o "%P %G %l %p %c %m"`
  split on single blanks, `sbatch -J toil_job_N --signal=B:INT@30
  --export=ALL,K=V --mem=M --cpus-per-task=C --time=0:S --wrap=exec CMD` (id =
  last word), `squeue -h --format "%i %t %M"`, `sacct -n -j IDS --format
  JobIDRaw,State,ExitCode -P -S 1970-01-01`, `scontrol show job ID` as
  key=value words.
- Cromwell (its SLURM backend example): `sbatch -J -D -o -e -t -p -c
  --mem-per-cpu --wrap "/bin/bash script"`, job-id-regex `Submitted batch job
  (\\d+).*`, check-alive `squeue -j ID` by exit status.
"""
import csv
import io
import os
import re
import subprocess
import time
from datetime import datetime, timedelta

import pytest

from conftest import need
from test_acct_link import acct_beside

TIMEOUT = 90


@pytest.fixture
def wf(make_cluster):
    """Two nodes, loomdbd on SQLite, MinJobAge=300 (squeue keeps finished jobs)."""
    need("loomdbd", "sacct", "sbatch", "squeue", "scancel", "scontrol")
    with acct_beside(make_cluster, cpus=4, gpus=0) as (c, _):
        yield c


def sh(c, cmd, cwd=None, input=None):
    """A command line through bash, as the tools run them (shell=True)."""
    return subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=c.env,
                          cwd=str(cwd or c.work), input=input, timeout=60)


def ok(c, cmd, **kw):
    p = sh(c, cmd, **kw)
    assert p.returncode == 0, "%s: rc %d\n%s%s" % (cmd, p.returncode, p.stdout, p.stderr)
    return p.stdout


def poll(c, fn, what, timeout=TIMEOUT):
    """Call fn until it returns a true value; return it."""
    got = {}

    def pred():
        got["v"] = fn()
        return got["v"]
    c.wait_for(pred, what, timeout=timeout, interval=0.5)
    return got["v"]


# ---- submitit ------------------------------------------------------------------------

def submitit_read_job_id(job_id):
    """submitit's read_job_id: '12_[1-3,5%2]' -> [('12','1','3'),('12','5')]."""
    m = re.search(r"(?P<main_id>\d+)_\[(?P<arrays>(\d+(-\d+)?(,)?)+)(\%\d+)?\]", job_id)
    if m is not None:
        return [tuple([m.group("main_id")] + r.split("-")) for r in m.group("arrays").split(",")]
    main_id, *array_id = job_id.split("_", 1)
    return [(main_id,)] if not array_id else [(main_id, str(int(array_id[0])))]


def submitit_read_info(text):
    """submitit's SlurmInfoWatcher.read_info over sacct --parsable2 output."""
    lines = text.splitlines()
    if len(lines) < 2:
        return {}
    names = lines[0].split("|")
    stats_by_id = {}
    for line in lines[1:]:
        stats = {x: y.strip() for x, y in zip(names, line.split("|"))}
        job_id = stats["JobID"]
        if not job_id or "." in job_id:
            continue
        for split in submitit_read_job_id(job_id):
            stats_by_id["_".join(split[:2])] = stats
            if len(split) >= 3:
                for index in range(int(split[1]), int(split[2]) + 1):
                    stats_by_id["%s_%d" % (split[0], index)] = stats
    return stats_by_id


def submitit_script(folder, array=None):
    params = {"cpus-per-task": "1", "job-name": "submitit", "mem": "1GB", "nodes": "1",
              "ntasks-per-node": "1", "open-mode": "append", "signal": "USR2@90", "time": "5",
              "wckey": "submitit"}
    out = "%s/%%j_%%t_log.out" % folder
    if array:
        params["array"] = array
        out = out.replace("%j", "%A_%a")
    params["output"] = out.replace("%t", "0")
    params["error"] = out.replace("%t", "0").replace(".out", ".err")
    lines = ["#!/bin/bash", "", "# Parameters"]
    lines += ["#SBATCH --%s=%s" % (k, params[k]) for k in sorted(params)]
    lines += ["", "# command", "export SUBMITIT_EXECUTOR=slurm",
              "srun --unbuffered --output %s --error %s sh -c 'echo task $SLURM_PROCID of "
              "$SLURM_JOB_ID'" % (out, out.replace(".out", ".err"))]
    return "\n".join(lines) + "\n"


def test_submitit(wf):
    c = wf
    folder = c.work / "submitit"
    folder.mkdir()
    (folder / "one.sh").write_text(submitit_script(folder))
    (folder / "arr.sh").write_text(submitit_script(folder, array="0-2%3"))
    (folder / "held.sh").write_text(submitit_script(folder, array="0-3%2"))
    ids = []
    for name, extra in (("one.sh", ""), ("arr.sh", ""), ("held.sh", "-H ")):
        out = ok(c, "sbatch %s%s" % (extra, folder / name))
        m = re.search(r"job (?P<id>[0-9]+)", out)
        assert m, out
        ids.append(m.group("id"))
    one, arr, held = ids
    cmd = "sacct -o JobID,State,NodeList --parsable2 -j %s -j %s -j %s" % (one, arr, held)
    want = [one] + ["%s_%d" % (arr, i) for i in range(3)]

    def done():
        info = submitit_read_info(ok(c, cmd))
        states = [info.get(k, {}).get("State") for k in want]
        return info if all(s == "COMPLETED" for s in states) else None
    info = poll(c, done, "submitit's jobs COMPLETED in sacct")
    assert info[one]["NodeList"] in c.node_names
    # The held array is one pending record, 'N_[0-3%2]', which submitit expands.
    for i in range(4):
        assert info["%s_%d" % (held, i)]["State"] == "PENDING"
        assert info["%s_%d" % (held, i)]["NodeList"] == "None assigned"
    assert "task 0 of %s" % one in (folder / ("%s_0_log.out" % one)).read_text()
    assert (folder / ("%s_1_0_log.out" % arr)).exists()
    # submitit's ids of array tasks are 'A_i'; sacct -j A_1 selects that task only
    rows = ok(c, "sacct -P -n -o JobID,State -j %s_1" % arr).split()
    assert rows and all(r.startswith("%s_1" % arr) for r in rows), rows
    ok(c, "scancel %s" % held)


# ---- dask-jobqueue ------------------------------------------------------------------

def test_dask_jobqueue(wf):
    c = wf
    logs = c.work / "dask-logs"
    logs.mkdir()
    script = "\n".join([
        "#!/usr/bin/env bash", "",
        "#SBATCH -J dask-worker",
        "#SBATCH -e %s/dask-worker-%%J.err" % logs,
        "#SBATCH -o %s/dask-worker-%%J.out" % logs,
        "#SBATCH -p debug",
        "#SBATCH -n 1",
        "#SBATCH --cpus-per-task=1",
        "#SBATCH --mem=954M",
        "#SBATCH -t 00:30:00",
        "",
        "JOB_ID=${SLURM_JOB_ID%;*}",
        "echo worker $JOB_ID",
        "sleep 300", ""])
    path = c.work / "dask-job.sh"
    path.write_text(script)
    out = ok(c, "sbatch %s" % path)
    job_id = re.search(r"(?P<job_id>\d+)", out).group("job_id")
    outfile = logs / ("dask-worker-%s.out" % job_id)
    poll(c, lambda: outfile.exists() and ("worker %s" % job_id) in outfile.read_text(),
         "the worker's output in dask-worker-%J.out")
    ok(c, "scancel %s" % job_id)
    poll(c, lambda: ok(c, "squeue -h -o %%t -j %s" % job_id).strip() in ("CA", ""),
         "the cancelled worker")


# ---- Parsl --------------------------------------------------------------------------

PARSL_SACCT = {"PENDING", "RUNNING", "CANCELLED", "COMPLETED", "FAILED", "NODE_FAIL",
               "BOOT_FAIL", "DEADLINE", "TIMEOUT", "REVOKED", "OUT_OF_MEMORY", "SUSPENDED",
               "PREEMPTED", "REQUEUED"}
PARSL_SQUEUE = {"PD", "R", "CA", "CF", "CG", "CD", "F", "TO", "NF", "RV", "SE"}


def parsl_status(text, table):
    states = {}
    for line in text.split("\n"):
        if not line:
            continue
        job_id, slurm_state, *_ = line.split()
        assert slurm_state in table, line
        states[job_id] = slurm_state
    return states


def test_parsl(wf):
    c = wf
    ok(c, "sacct -X")  # the provider's probe: sacct works, so it polls with sacct
    ids = []
    for i, body in enumerate(("true", "sleep 300")):
        name = "parsl.slurm.%d.%d" % (int(time.time()), i)
        path = c.work / name
        path.write_text("#!/bin/bash\n\n#SBATCH --job-name=%s\n#SBATCH --output=%s.stdout\n"
                        "#SBATCH --error=%s.stderr\n#SBATCH --nodes=1\n#SBATCH --time=10\n"
                        "#SBATCH --ntasks-per-node=1\n\n#SBATCH --exclusive\n"
                        "#SBATCH --partition=debug\n\nexport JOBNAME=\"%s\"\n%s\n"
                        % (name, path, path, name, body))
        out = ok(c, "sbatch %s" % path)
        for line in out.split("\n"):
            m = re.match(r"Submitted batch job (?P<id>\S*)", line)
            if m:
                ids.append(m.group("id"))
    assert len(ids) == 2
    done, long = ids
    sacct = "sacct -X --noheader --format=jobid,state%%20 --job '%s'" % ",".join(ids)
    poll(c, lambda: parsl_status(ok(c, sacct), PARSL_SACCT).get(done) == "COMPLETED",
         "parsl's first block COMPLETED")
    squeue = "squeue --noheader --format='%%i %%t' --job '%s'" % ",".join(ids)
    st = parsl_status(ok(c, squeue), PARSL_SQUEUE)
    # A finished job is not listed (no -t): Parsl takes a missing one as COMPLETED.
    assert st.get(done, "CD") in ("CG", "CD") and st[long] in ("PD", "R"), st
    ok(c, "scancel %s" % long)
    poll(c, lambda: parsl_status(ok(c, sacct), PARSL_SACCT).get(long) == "CANCELLED",
         "parsl's cancelled block ('CANCELLED by N' split on blanks)")


# ---- Nextflow -----------------------------------------------------------------------

NEXTFLOW_STATUS = {"PD": "PENDING", "R": "RUNNING", "CA": "ERROR", "CF": "PENDING",
                   "CG": "RUNNING", "CD": "DONE", "F": "ERROR", "TO": "ERROR", "NF": "ERROR",
                   "S": "HOLD", "ST": "HOLD", "PR": "ERROR", "BF": "ERROR"}


def nextflow_parse_queue(text):
    result = {}
    for line in text.splitlines():
        cols = re.split(r"\s+", line)
        if len(cols) == 2:
            result[cols[0]] = NEXTFLOW_STATUS.get(cols[1])
    return result


def nextflow_job_id(text):
    for line in text.splitlines():
        m = re.search(r"Submitted batch job (\d+)", line)
        if m:
            return m.group(1)
    assert text.strip().isdigit(), text
    return text.strip()


def test_nextflow(wf):
    c = wf
    ids = {}
    for name, body in (("ok", "echo hello"), ("bad", "exit 3")):
        work = c.work / "nf" / name
        work.mkdir(parents=True)
        run = "\n".join(["#!/bin/bash", "#SBATCH -J nf-say_%s_(1)" % name,
                         "#SBATCH -o %s/.command.log" % work, "#SBATCH --no-requeue",
                         "#SBATCH --signal B:USR2@30", "#SBATCH -c 2", "#SBATCH -t 00:05:00",
                         "#SBATCH --mem 100M", "#SBATCH -p debug",
                         "# NEXTFLOW TASK: say (%s)" % name, body, ""])
        (work / ".command.run").write_text(run)
        if name == "ok":
            ids[name] = nextflow_job_id(ok(c, "sbatch .command.run", cwd=work))
        else:  # Fusion: the launcher script on stdin
            ids[name] = nextflow_job_id(ok(c, "sbatch", cwd=work, input=run))
    user = os.environ.get("USER") or c.user
    cmd = "squeue --noheader -o '%%i %%t' -t all -p debug -u %s" % c.user

    def finished():
        st = nextflow_parse_queue(ok(c, cmd))
        return st if st.get(ids["ok"]) == "DONE" and st.get(ids["bad"]) == "ERROR" else None
    poll(c, finished, "nextflow's tasks DONE and ERROR in squeue -t all")
    assert "hello" in (c.work / "nf" / "ok" / ".command.log").read_text()
    assert user


# ---- snakemake ----------------------------------------------------------------------

def test_snakemake_plugin_and_builtin(wf):
    c = wf
    uuid = "8d5c3cbe-5d8b-4f0d-9bb4-0d1c4a8f2c11"
    logs = c.work / ".snakemake" / "slurm_logs" / "rule_a"
    logs.mkdir(parents=True)
    # snakemake 7.21's built-in executor finds the default partition and the accounts
    parts = ok(c, "sinfo -o %P").split()
    assert [p.replace("*", "") for p in parts if "*" in p] == ["debug"]
    accts = ok(c, 'sacctmgr -n -s list user "%s" format=account%%20' % c.user)
    assert all(len(l) == 21 for l in accts.splitlines()), accts  # %20 right-justified + ' '
    base = ("sbatch --parsable --job-name %s --output '%s/%%j.log' --export=ALL --comment "
            "'rule_a_wildcards' -p debug -t 5 --mem 100 --ntasks=1 --cpus-per-task=1 -D %s"
            % (uuid, logs, c.work))
    first = ok(c, base + " --wrap='echo plugin'").strip()
    assert re.fullmatch(r"\d+", first), first
    second = ok(c, base + " --cluster loomtest --wrap='exit 1'").strip()
    assert re.fullmatch(r"\d+;loomtest", second), second  # '<id>;<cluster>' with a cluster
    second = second.split(";")[0]
    start = "%s" % f"{datetime.now() - timedelta(days=2):%Y-%m-%dT%H:00}"
    sacct = ("sacct -X --parsable2 --clusters all --noheader --format=JobIdRaw,State "
             "--starttime %s --endtime now --name %s" % (start, uuid))

    def stati():
        res = {e[0]: e[1].split(sep=None, maxsplit=1)[0]
               for e in csv.reader(io.StringIO(ok(c, sacct)), delimiter="|")}
        return res if res.get(first) == "COMPLETED" and res.get(second) == "FAILED" else None
    poll(c, stati, "the plugin's sacct --name query")
    sq = ok(c, "squeue '--format=%%i|%%T' --states=all --noheader --name %s" % uuid)
    assert {l.split("|")[0]: l.split("|")[1] for l in sq.split()} == {
        first: "COMPLETED", second: "FAILED"}
    min_age = [l for l in ok(c, "scontrol show config").splitlines()
               if l.strip().startswith("MinJobAge")]
    assert re.match(r"^(\d+)\s*([a-zA-Z]*)", min_age[0].split("=")[1].strip()).group(1) == "300"
    assert "plugin" in (logs / ("%s.log" % first)).read_text()
    # snakemake 7.21: sacct by job id, then scontrol's JobState
    out = ok(c, "sacct -P -n --format=JobIdRaw,State -j %s" % first)
    res = {x.split("|")[0]: x.split("|")[1] for x in out.strip().split("\n")}
    assert res[first] == "COMPLETED"
    out = ok(c, "scontrol show jobid -dd %s" % second)
    assert re.search(r"JobState=(\w+)", out).group(1) == "FAILED"
    ok(c, "scancel %s %s --clusters=all" % (first, second))


# ---- Cromwell -----------------------------------------------------------------------

def test_cromwell(wf):
    c = wf
    cwd = c.work / "cromwell" / "call-hello" / "execution"
    cwd.mkdir(parents=True)
    (cwd / "script").write_text("echo hello > %s/hello.txt\nsleep 300\n" % cwd)
    out = ok(c, 'sbatch -J cromwell_abc_hello -D %s -o %s/stdout -e %s/stderr -t 5 -p debug '
                '-c 1 --mem-per-cpu 100 --wrap "/bin/bash %s/script"' % (cwd, cwd, cwd, cwd))
    job_id = re.match(r"Submitted batch job (\d+).*", out).group(1)
    poll(c, lambda: (cwd / "hello.txt").exists(), "the call's output")
    assert sh(c, "squeue -j %s" % job_id).returncode == 0  # check-alive: alive
    ok(c, "scancel %s" % job_id)
    gone = sh(c, "squeue -j 999999")
    assert gone.returncode == 1 and "Invalid job id specified" in gone.stderr


# ---- Toil ---------------------------------------------------------------------------

def toil_slurm_time(text):
    total, parts = 0, text.replace("-", ":").split(":")[::-1]
    for index, mult in enumerate([1, 60, 3600, 86400]):
        if index < len(parts):
            total += mult * int(parts[index])
    return total


def test_toil(wf):
    c = wf
    lines = ok(c, 'sinfo -a -o "%P %G %l %p %c %m"').split("\n")[1:]
    parts = [l.split(" ") for l in lines if l.strip()]
    assert len(parts) == 1 and len(parts[0]) == 6, parts  # six single-blank fields
    assert parts[0][0].rstrip("*") == "debug"
    with pytest.raises(ValueError):  # 'infinite': Toil takes float("inf")
        toil_slurm_time(parts[0][2])
    ids = []
    for name, cmd in (("ok", "sleep 6"), ("bad", "sh -c 'exit 3'")):
        out = c.run("sbatch", "-J", "toil_job_1_" + name, "--signal=B:INT@30",  # argv, no shell
                    "--export=ALL,TOIL_WORKDIR=%s" % c.work, "--mem=100", "--cpus-per-task=1",
                    "--time=0:300", "--wrap=exec " + cmd, check=True).stdout
        ids.append(int(out.strip().split()[-1]))
    good, bad = ids
    running = {}

    def seen_running():
        for line in ok(c, 'squeue -h --format "%i %t %M"').split("\n"):
            values = line.split()
            if len(values) == 3 and values[1] == "R":
                running[int(values[0])] = toil_slurm_time(values[2])
        return good in running
    poll(c, seen_running, "toil's job R in squeue")
    cmd = "sacct -n -j %d,%d --format JobIDRaw,State,ExitCode -P -S 1970-01-01" % (good, bad)

    def statuses():
        st = {}
        for line in ok(c, cmd).splitlines():
            job_id_raw, state, exitcode = line.strip().split("|")
            if "." not in job_id_raw:
                st[int(job_id_raw)] = (state.split(" ", 1)[0],
                                       int(exitcode.split(":")[0]))
        return st if st.get(good, ("",))[0] == "COMPLETED" and st.get(bad, ("",))[0] == \
            "FAILED" else None
    st = poll(c, statuses, "toil's jobs in sacct -S 1970-01-01")
    assert st[good] == ("COMPLETED", 0) and st[bad] == ("FAILED", 3), st
    job = {}
    for item in ok(c, "scontrol show job %d" % bad).split():
        bits = item.split("=", 1)
        if len(bits) == 2:
            key = bits[0]
            job[key] = bits[1]
        else:
            job[key] += " " + bits[0]
    assert int(job["JobId"]) == bad and job["JobState"] == "FAILED" and job["ExitCode"] == "3:0"
    assert job["TimeLimit"] == "00:05:00"
