#!/usr/bin/env python3
"""Capture real Slurm's sacctmgr outputs for the dbd integration tests.

Runs every command of dbd_sacctmgr_cmds.txt, in order, against the Slurm
named by SLURM_CONF (a fresh accounting database with one cluster; see
bench/slurmdbd_local.sh) and writes dbd_expected/sacctmgr.json:
[{"cmd": ..., "stdout": ..., "stderr": ..., "rc": ...}, ...].
Run as: TZ=UTC SLURM_CONF=... python3 dbd_capture.py
"""
import json
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def commands(path):
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                yield line


def main():
    out = []
    for cmd in commands(os.path.join(HERE, "dbd_sacctmgr_cmds.txt")):
        p = subprocess.run(shlex.split(cmd), capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=60)
        out.append({"cmd": cmd, "stdout": p.stdout, "stderr": p.stderr, "rc": p.returncode})
        sys.stdout.write("### %s [rc=%d]\n%s%s" % (cmd, p.returncode, p.stdout, p.stderr))
    with open(os.path.join(HERE, "dbd_expected", "sacctmgr.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
