"""Byte-exact layouts of squeue, sinfo and scontrol against real Slurm 22.05.

Each section of cli_expected/<cmd>.txt is the output real Slurm printed
(stderr first, then stdout; every line ends with '$' as `cat -A` shows it,
so trailing blanks are visible) for a command run on the cluster state that
cli_scenario.py describes. Here a fake controller (cli_fakectld.py) serves
that state to Loom's command and the two texts must be identical. A
"<DATE>$" line stands for the date line of the -l layouts, which real
Slurm stamps with the current time.
"""
import os
import re
import subprocess

import pytest

import cli_scenario
from cli_fakectld import FakeCtld

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(os.environ.get("LOOM_BUILD_DIR", os.path.join(HERE, "../../build/dev")), "bin")
DATE = re.compile(r"^[A-Z][a-z]{2} [A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d \d{4}$")


def load_sections():
    cases = []
    for name in ("squeue", "sinfo", "scontrol"):
        path = os.path.join(HERE, "cli_expected", name + ".txt")
        cur = None
        for line in open(path):
            line = line.rstrip("\n")
            if line.startswith("# "):
                continue
            if line.startswith("### "):
                snap, cmd = line[4:].split(" ", 1)
                cur = (snap, cmd, [])
                cases.append(cur)
            elif cur is not None:
                assert line.endswith("$"), "%s: line without '$': %r" % (path, line)
                cur[2].append(line[:-1])
    return cases


CASES = load_sections()


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    base = tmp_path_factory.mktemp("clilay")
    state = base / "state"
    state.mkdir()
    conf = base / "slurm.conf"
    conf.write_text(cli_scenario.SLURM_CONF.format(state=state, spool=base / "spool"))
    ctlds = {}

    def start(snapshot):
        for c in ctlds.values():
            c.close()
        ctlds.clear()
        ctlds[snapshot] = FakeCtld(str(state / "loomctld.sock"), cli_scenario.replies(snapshot))
        return ctlds[snapshot]

    yield {"conf": str(conf), "start": start, "ctlds": ctlds}
    for c in ctlds.values():
        c.close()


def run(env, snapshot, cmd):
    if snapshot not in env["ctlds"]:
        env["start"](snapshot)
    argv = cmd.split(" ")
    argv[0] = os.path.join(BIN, argv[0])
    e = dict(os.environ, SLURM_CONF=env["conf"], TZ="UTC")
    for k in list(e):
        if k.startswith(("SQUEUE_", "SINFO_", "SLURM_TIME")):
            del e[k]
    return subprocess.run([a for a in argv if a != ""], env=e, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("snapshot,cmd,expected", CASES,
                         ids=["%s:%s" % (c[0], c[1]) for c in CASES])
def test_layout(env, snapshot, cmd, expected):
    r = run(env, snapshot, cmd)
    got = (r.stderr + r.stdout).split("\n")
    while got and got[-1] == "":
        got.pop()
    while expected and expected[-1] == "":
        expected = expected[:-1]
    got = ["<DATE>" if DATE.match(line) else line for line in got]
    assert got == expected, "\n".join(["expected:"] + expected + ["got:"] + got)


# Checked side by side with squeue/sinfo 22.05.8 (hsq, session 3): -M against a
# slurmctld with slurmdbd prints "CLUSTER: <name>" before the header (after the
# -l date line, not with -h) and rejects a cluster the database does not know;
# a bad -S letter is reported (the last one), the header is still printed and
# the exit status is 1; %all prints every letter; -O ExcNodes is not a 22.05 name.
SQ_HEADER = ("             JOBID PARTITION     NAME     USER ST       TIME  NODES "
             "NODELIST(REASON)")
SQ_ALL_HEADER = (
    "ACCOUNT|TRES_PER_NODE|MIN_CPUS|MIN_TMP_DISK|END_TIME|FEATURES|GROUP|OVER_SUBSCRIBE|JOBID|"
    "NAME|COMMENT|TIME_LIMIT|MIN_MEMORY|REQ_NODES|COMMAND|PRIORITY|QOS|REASON||ST|USER|"
    "RESERVATION|WCKEY|EXC_NODES|NICE|S:C:T|JOBID|EXEC_HOST|CPUS|NODES|DEPENDENCY|ARRAY_JOB_ID|"
    "GROUP|SOCKETS_PER_NODE|CORES_PER_SOCKET|THREADS_PER_CORE|ARRAY_TASK_ID|TIME_LEFT|TIME|"
    "NODELIST|CONTIGUOUS|PARTITION|PRIORITY|NODELIST(REASON)|START_TIME|STATE|UID|SUBMIT_TIME|"
    "LICENSES|CORE_SPEC|SCHEDNODES|WORK_DIR")
NO_CLUSTER = ("%s: error: No cluster 'nosuch' known by database.\n"
              "%s: error: '%s' can't be reached now, or it is an invalid entry for --cluster.  "
              "Use 'sacctmgr list clusters' to see available clusters.\n")


def test_clusters_option(env):
    plain = run(env, "jobs", "squeue")
    r = run(env, "jobs", "squeue -M cmp")
    assert (r.returncode, r.stderr, r.stdout) == (0, "", "CLUSTER: cmp\n" + plain.stdout)
    r = run(env, "jobs", "squeue --clusters=cmp -h")
    assert r.stdout == run(env, "jobs", "squeue -h").stdout
    r = run(env, "jobs", "squeue -M cmp -l")
    assert r.stdout.split("\n")[1:3] == ["CLUSTER: cmp", run(env, "jobs", "squeue -l").stdout
                                         .split("\n")[1]]
    r = run(env, "jobs", "squeue -M nosuch")
    assert (r.returncode, r.stdout, r.stderr) == (1, "", NO_CLUSTER % ("squeue", "squeue",
                                                                        "nosuch"))
    r = run(env, "jobs", "squeue -M cmp,nosuch")
    assert r.returncode == 0
    assert r.stderr == "squeue: error: No cluster 'nosuch' known by database.\n"
    assert r.stdout == "CLUSTER: cmp\n" + plain.stdout
    assert run(env, "jobs", "squeue -M all").stdout == "CLUSTER: cmp\n" + plain.stdout
    plain = run(env, "idle", "sinfo")
    r = run(env, "idle", "sinfo -M cmp")
    assert (r.returncode, r.stdout) == (0, "CLUSTER: cmp\n" + plain.stdout)
    assert run(env, "idle", "sinfo -M cmp -h").stdout == run(env, "idle", "sinfo -h").stdout
    r = run(env, "idle", "sinfo -M nosuch")
    assert (r.returncode, r.stdout, r.stderr) == (1, "", NO_CLUSTER % ("sinfo", "sinfo", "nosuch"))


def test_squeue_sort_keys_and_all(env):
    r = run(env, "jobs", "squeue -S badkey")
    assert (r.returncode, r.stderr, r.stdout) == (
        1, "squeue: error: Invalid sort specification: y\n", SQ_HEADER + "\n")
    for key in "akoqrswxyAEFKRWXYZ":
        r = run(env, "jobs", "squeue -h -S i,%s" % key)
        assert (r.returncode, r.stdout) == (1, ""), key
        assert r.stderr == "squeue: error: Invalid sort specification: %s\n" % key
    assert run(env, "jobs", "squeue -h -S -p,i,t,P,u,M,l,D,C,V,S,e").returncode == 0
    r = run(env, "jobs", "squeue -o %all")
    assert r.stdout.split("\n")[0] == SQ_ALL_HEADER
    assert len(r.stdout.split("\n")[1].split("|")) == 52
    r = run(env, "jobs", "squeue -h -O ExcNodes")
    assert r.stderr == "squeue: error: Invalid job format specification: ExcNodes\n"
    r = run(env, "jobs", "squeue -h -j 1 -o %i%")
    assert (r.stderr, r.stdout) == ("", "1\n")
    r = run(env, "jobs", "squeue -h -j 1 -o %i|%5")
    assert (r.stderr, r.stdout) == ("squeue: error: Invalid job format specification: \n",
                                    "1|%5\n")


SQ_USAGE = ("Usage: squeue [-A account] [--clusters names] [-i seconds] [--job jobid]\n"
            "              [-n name] [-o format] [-p partitions] [--qos qos]\n"
            "              [--reservation reservation] [--sort fields] [--start]\n"
            "              [--step step_id] [-t states] [-u user_name] [--usage]\n"
            "              [-L licenses] [-w nodes] [--federation] [--local] [--sibling]\n"
            "\t      [-ahjlrsv]\n")


def test_squeue_option_errors(env):
    """Option handling as squeue 22.05.8 (side by side): -j takes one operand,
    any other is refused with the usage on stdout; -o and -O exclude each
    other; -i wants a positive number; -s wants step ids; --start wins over
    -l; --json takes no argument; --only-job-state is not a 22.05 option."""
    assert run(env, "jobs", "squeue --usage").stdout == SQ_USAGE
    assert run(env, "jobs", "squeue -h -j 1 -o %i").stdout == "1\n"
    for cmd, bad in (("squeue -j 1 -j 2", "2"), ("squeue 1", "1")):
        r = run(env, "jobs", cmd)
        assert (r.returncode, r.stdout) == (1, SQ_USAGE)
        assert r.stderr == "squeue: error: Unrecognized option: %s\n" % bad
    r = run(env, "jobs", "squeue -O JobID -o %i")
    assert (r.returncode, r.stdout, r.stderr) == (
        1, "", "squeue: error: -o (--format) is incompatible with -O (--Format)\n")
    r = run(env, "jobs", "squeue -o %i -O JobID")
    assert (r.returncode, r.stdout, r.stderr) == (
        1, "", "squeue: error: -O (--Format) is incompatible with -o (--format)\n")
    for arg in ("0", "abc"):
        r = run(env, "jobs", "squeue -i " + arg)
        assert (r.returncode, r.stdout, r.stderr) == (1, "", "squeue: error: --iterate=%s\n\n"
                                                      % arg)
    r = run(env, "jobs", "squeue -s 1")
    assert (r.returncode, r.stderr) == (1, "squeue: error: Invalid job_step id: 1.??\n")
    steps_header = "         STEPID     NAME PARTITION     USER      TIME NODELIST\n"
    assert run(env, "jobs", "squeue -s 1.batch").stdout == steps_header
    assert run(env, "jobs", "squeue --steps=1.batch").stdout == steps_header
    start = run(env, "jobs", "squeue --start").stdout.split("\n")
    r = run(env, "jobs", "squeue --start -l").stdout.split("\n")
    assert DATE.match(r[0]) and r[1:] == start
    r = run(env, "jobs", "squeue --json=x")
    assert r.returncode == 1 and r.stderr.startswith(
        "squeue: option '--json' doesn't allow an argument\n")
    r = run(env, "jobs", "squeue --only-job-state")
    assert r.returncode == 1 and r.stderr.startswith(
        "squeue: unrecognized option '--only-job-state'\n")
    assert run(env, "jobs", "squeue -h -L nosuchlicense").stdout == ""
    assert run(env, "jobs", "squeue --array-unique").stdout == run(env, "jobs", "squeue").stdout


def test_squeue_repeated_options_and_help(env):
    """A repeated list option replaces the earlier one (squeue 22.05.8:
    -t PD -t R shows running jobs only); --help is 22.05.8's text."""
    assert run(env, "jobs", "squeue -h -o %i -t PD -t R").stdout == "1\n2\n"
    assert run(env, "jobs", "squeue -h -o %i -j1 -j2").stdout == "2\n"
    assert run(env, "jobs", "squeue -h -o %i -p debug -p long").stdout == "5\n"
    r = run(env, "jobs", "squeue -h -o %i -u nosuchuser -u root")
    assert r.stderr == "squeue: error: Invalid user: nosuchuser\n\n"
    assert r.stdout == run(env, "jobs", "squeue -h -o %i").stdout != ""
    h = run(env, "jobs", "squeue --help").stdout.split("\n")
    assert len(h) == 53 and h[0] == "Usage: squeue [OPTIONS]"
    assert h[2] == "\t\t\t\t  to view, default is all accounts"
    assert h[-5:] == ["", "Help options:", "  --help                          show this help message",
                      "  --usage                         display a brief summary of squeue options",
                      ""]


def test_squeue_env_states_after_options(env):
    """SQUEUE_STATES is read only when -t is absent (22.05.8: a bad value is
    not even reported then)."""
    run(env, "jobs", "squeue")  # the fake controller for this snapshot
    e = dict(os.environ, SLURM_CONF=env["conf"], TZ="UTC", SQUEUE_STATES="bogus")
    sq = os.path.join(BIN, "squeue")
    r = subprocess.run([sq, "-h", "-t", "R", "-o", "%i"], env=e, capture_output=True, text=True)
    assert (r.returncode, r.stderr, r.stdout) == (0, "", "1\n2\n")
    r = subprocess.run([sq, "-h", "-o", "%i"], env=e, capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr.startswith("squeue: error: Invalid job state specified: bogus\n")


def test_squeue_format_long_signed_sizes(env):
    """-O sizes with a sign, as squeue 22.05.8 prints them (side by side):
    "+5" is 5; "-5" or ".-5" is the bare value, one blank, then the suffix."""
    got = run(env, "jobs", "squeue -h -j 1 -O JobID:-5x,Name:+6,JobID:.-12|").stdout
    assert got == "1 xwrap  1 |\n"


def test_squeue_jobs_naming_tasks_fold(env):
    """-j naming two or more tasks of a pending array prints them folded into
    one line without the throttle, as squeue 22.05.8 does (-r: one line each);
    each task once."""
    r = run(env, "jobs", "squeue -h -j 4_3,4_5,4_6 -o %i|%K|%r")
    assert (r.stderr, r.stdout) == ("", "4_[3,5-6]|3,5-6|Resources\n")
    r = run(env, "jobs", "squeue -h -r -j 4_3,4_5 -o %i")
    assert r.stdout == "4_3\n4_5\n"
    assert run(env, "jobs", "squeue -h -j 4_3,1 -o %i").stdout == "4_3\n1\n"
