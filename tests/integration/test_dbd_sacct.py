"""sacct against loomdbd, byte for byte against real Slurm 22.05.8.

dbd_expected/sacct.json holds real sacct outputs for three jobs (a failing
batch job with two srun steps, a plain job, a two-task array). Its last
entry is a -P dump of every field; the test turns that dump into Loom job
and step records, stores them through dbd.job (signed frames, as loomctld
sends them), runs every captured command against loomdbd (SQLite, and
PostgreSQL when LOOM_TEST_PGSQL is set) and compares the outputs."""
import calendar
import json
import os
import shlex
import socket
import subprocess
import time

from dbd_util import BIN, dbd  # noqa: F401 (the fixture: a fresh loomdbd)

HERE = os.path.dirname(os.path.abspath(__file__))


def epoch(text):
    return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%S")) if text[:1].isdigit() else 0


def status(text):
    code, sig = text.split(":")
    return (int(code) << 8) | int(sig)


def usec(text):
    if "." in text:
        mins, rest = text.split(":")
        secs, ms = rest.split(".")
        return (int(mins) * 60 + int(secs)) * 1000000 + int(ms) * 1000
    h, m, s = text.split(":")
    return (int(h) * 3600 + int(m) * 60 + int(s)) * 1000000


def kib(text):
    return int(text[:-1]) if text else None


def records(dump):
    """Job and step records from sacct -P -o <every field>."""
    lines = dump.strip().split("\n")
    head = lines[0].split("|")
    jobs, steps = {}, []
    for line in lines[1:]:
        f = dict(zip(head, line.split("|")))
        rec = {"state": f["State"], "exit_code": status(f["ExitCode"]),
               "start_time": epoch(f["Start"]), "end_time": epoch(f["End"]),
               "nodes": f["NodeList"], "tres_alloc": f["AllocTRES"], "name": f["JobName"],
               "total_cpu": usec(f["TotalCPU"]), "user_cpu": usec(f["UserCPU"]),
               "system_cpu": usec(f["SystemCPU"])}
        raw = f["JobIDRaw"].split(".")
        if len(raw) == 1:
            rec.update(job_id=int(raw[0]), submit_time=epoch(f["Submit"]),
                       eligible_time=epoch(f["Eligible"]), partition=f["Partition"],
                       account=f["Account"], user_name=f["User"], user_id=int(f["UID"]),
                       group_name=f["Group"], group_id=int(f["GID"]),
                       derived_exit_code=status(f["DerivedExitCode"]),
                       num_cpus=int(f["AllocCPUS"]), num_nodes=int(f["NNodes"]),
                       tres_req=f["ReqTRES"], mem_per_node=int(f["ReqMem"][:-1]),
                       time_limit=-1 if f["TimelimitRaw"] == "UNLIMITED" else int(f["TimelimitRaw"]),
                       reason=f["Reason"], work_dir=f["WorkDir"], qos=f["QOS"],
                       priority=int(f["Priority"]), flags=f["Flags"])
            if "_" in f["JobID"]:
                a, t = f["JobID"].split("_")
                rec.update(array_job_id=int(a), array_task_id=int(t))
            jobs[raw[0]] = rec
        else:
            rec.update(job_id=int(raw[0]), step_id=raw[1], ncpus=int(f["AllocCPUS"]),
                       nnodes=int(f["NNodes"]), max_rss_node=f["MaxRSSNode"] or None)
            for key, col in (("max_rss", "MaxRSS"), ("ave_rss", "AveRSS"),
                             ("max_vmsize", "MaxVMSize")):
                if f[col]:
                    rec[key] = kib(f[col])
            steps.append({k: v for k, v in rec.items() if v is not None})
    for s in steps:
        s["submit_time"] = jobs[str(s["job_id"])]["submit_time"]
    return list(jobs.values()), steps


def load(dbd, expected):
    jobs, steps = records(expected[-1]["stdout"])
    recs = [{"seq": i + 1, "job": j} for i, j in enumerate(jobs)]
    recs += [{"seq": len(recs) + i + 1, "step": s} for i, s in enumerate(steps)]
    rep = dbd.call({"type": "dbd.job", "records": recs})
    assert rep["rc"] == 0 and rep["acked"] == len(recs), rep
    rep = dbd.call({"type": "dbd.job", "records": recs})  # resent: stored once
    assert rep["rc"] == 0


def test_sacct_matches_slurm(dbd):
    with open(os.path.join(HERE, "dbd_expected", "sacct.json")) as f:
        expected = json.load(f)
    load(dbd, expected)
    day = time.strftime("%Y-%m-%d", time.gmtime(epoch(expected[-1]["stdout"].split("\n")[1]
                                                        .split("|")[16])))
    failures = []
    for e in expected:
        argv = shlex.split(e["cmd"])
        if "-j" not in argv and "-s" not in argv:  # the capture day was "today" for Slurm's default -S
            argv[1:1] = ["-S", day]
        p = dbd.run(argv)
        got = {"stdout": p.stdout, "stderr": p.stderr, "rc": p.returncode}
        want = {"stdout": e["stdout"], "stderr": e["stderr"], "rc": e["rc"]}
        if got != want:
            failures.append("%s\n--- want %r\n--- got  %r" % (e["cmd"], want, got))
    assert not failures, "\n\n".join(failures)


def test_sacct_json_and_helpformat(dbd):
    with open(os.path.join(HERE, "dbd_expected", "sacct.json")) as f:
        load(dbd, json.load(f))
    p = dbd.run(["sacct", "-a", "-j", "1,2", "--json"])
    assert [j["job_id"] for j in json.loads(p.stdout)["jobs"]] == [1, 2]
    p = dbd.run(["sacct", "-e"])
    assert "JobID" in p.stdout and "MaxRSS" in p.stdout
    p = dbd.run(["sacct", "-o", "Bogus"])
    assert p.returncode == 1 and 'Invalid field requested: "Bogus"' in p.stderr


def test_requeued_runs_need_duplicates(dbd):
    """A requeued job's earlier run is its own record: sacct shows only the
    latest run of each job id, -D/--duplicates shows them all, oldest first."""
    base = {"job_id": 7, "name": "rq", "partition": "debug", "account": "acct",
            "user_name": "root", "user_id": 0, "num_cpus": 1, "exit_code": 0}
    runs = [dict(base, submit_time=1_800_000_000, start_time=1_800_000_010,
                 end_time=1_800_000_020, state="REQUEUED"),
            dict(base, submit_time=1_800_000_020, start_time=1_800_000_030,
                 end_time=1_800_000_040, state="COMPLETED")]
    rep = dbd.call({"type": "dbd.job", "records": [{"seq": i + 1, "job": r}
                                                   for i, r in enumerate(runs)]})
    assert rep["rc"] == 0
    argv = ["sacct", "-a", "-n", "-X", "-P", "-j", "7", "-o", "JobID,State"]
    assert dbd.run(argv).stdout == "7|COMPLETED\n"
    assert dbd.run(argv + ["-D"]).stdout == "7|REQUEUED\n7|COMPLETED\n"
    assert dbd.run(argv + ["--duplicates"]).stdout == "7|REQUEUED\n7|COMPLETED\n"


def test_second_loomdbd_refused(dbd):
    """A second loomdbd on the same state refuses to start before it touches
    the first one's Unix socket (it used to replace it, then fail on the port)."""
    log2 = os.path.join(dbd.tmp, "second.log")
    p = subprocess.run([os.path.join(BIN, "loomdbd"), "-D", "-f", dbd.conf, "-L", log2],
                       env=dbd.env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 1, p.stderr
    assert "error: another loomdbd uses %s" % dbd.state in open(log2).read()
    s = socket.socket(socket.AF_UNIX)
    s.connect(os.path.join(dbd.state, "loomdbd.sock"))  # the first's, still there
    s.close()
    assert dbd.proc.poll() is None


def test_sacct_client_filters(dbd):
    """-N, -i, -I, -q, -g, -W, --timelimit-min/-max and -T as sacct 22.05.8
    applies them side by side: -N/-i/-I match jobs that ran; the limit's
    minimum alone matches it exactly, with a maximum the range; -T cuts
    times to the window; -B and --env-vars print NONE (no stored scripts)."""
    t0 = 1_700_000_000
    base = {"partition": "debug", "account": "acct", "user_name": "root", "user_id": 0,
            "group_id": 0, "exit_code": 0, "submit_time": t0, "state": "COMPLETED"}
    jobs = [dict(base, job_id=11, name="a", nodes="n[1-2]", num_nodes=2, num_cpus=4,
                 admin_comment="JS1:abc",
                 qos="normal", time_limit=10, start_time=t0 + 10, end_time=t0 + 100),
            dict(base, job_id=12, name="b", nodes="n3", num_nodes=1, num_cpus=1,
                 qos="high", time_limit=60, start_time=t0 + 20, end_time=t0 + 200),
            dict(base, job_id=13, name="c", num_nodes=1, num_cpus=1, qos="normal",
                 time_limit=10, state="CANCELLED", end_time=t0 + 5)]
    rep = dbd.call({"type": "dbd.job", "records": [{"seq": i + 1, "job": r}
                                                   for i, r in enumerate(jobs)]})
    assert rep["rc"] == 0
    day = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t0 - 60))

    def ids(*args):
        p = dbd.run(["sacct", "-a", "-n", "-X", "-P", "-S", day, "-o", "JobID", *args])
        assert p.returncode == 0, p.stderr
        return p.stdout.split()
    assert ids() == ["11", "12", "13"]
    assert ids("-N", "n2") == ["11"]
    p = dbd.run(["sacct", "-a", "-n", "-X", "-P", "-S", day, "-o", "JobID,AdminComment"])
    assert p.stdout == "11|JS1:abc\n12|\n13|\n", p.stdout
    assert ids("--nodelist=n[2-3]") == ["11", "12"]
    assert ids("-i", "1") == ["12"]
    assert ids("--nnodes=1-2") == ["11", "12"]
    assert ids("-I", "2-8") == ["11"]
    assert ids("-q", "high") == ["12"]
    assert ids("-g", "0") == ["11", "12", "13"] == ids("--group=root")
    assert ids("-W", "x") == []
    assert ids("--timelimit-min=10") == ["11", "13"]
    assert ids("--timelimit-min=11", "--timelimit-max=1:00:00") == ["12"]
    window = [time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t)) for t in (t0 + 50, t0 + 60)]
    p = dbd.run(["sacct", "-a", "-n", "-X", "-P", "-T", "-S", window[0], "-E", window[1],
                 "-j", "11", "-o", "Start,End,ElapsedRaw"])
    assert p.stdout == "%s|%s|10\n" % tuple(window), p.stdout
    for args, msg in ((["-i", "x"], 'sacct: error: Invalid numeric value "x" for requested '
                                    "node range.\n"),
                      (["--timelimit-min=x"], "sacct: fatal: Invalid time limit specification\n"),
                      (["-g", "nosuchgroup_x"], "sacct: error: Invalid group id: nosuchgroup_x\n"),
                      (["-u", "nosuchuser_x"], "sacct: error: Invalid user id: nosuchuser_x\n"),
                      (["-B"], "sacct: fatal: When requesting job scripts you must also request "
                               "specific jobs with the '-j' option.\n")):
        p = dbd.run(["sacct", *args])
        assert (p.returncode, p.stderr) == (1, msg), (args, p.stderr)
    # SACCT_FORMAT stands for -o when -o is not given
    env = dict(dbd.env, SACCT_FORMAT="JobID,JobName%4")
    argv = [os.path.join(BIN, "sacct"), "-a", "-n", "-X", "-j", "11"]
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    assert p.stdout == "11              a \n", p.stdout
    p = subprocess.run(argv + ["-o", "State"], capture_output=True, text=True, env=env, timeout=60)
    assert p.stdout == " COMPLETED \n", p.stdout
    p = dbd.run(["sacct", "-B", "-j", "12"])
    assert p.stdout == "Batch Script for 12\n%s\nNONE\n\n" % ("-" * 80), p.stdout
