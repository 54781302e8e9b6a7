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
