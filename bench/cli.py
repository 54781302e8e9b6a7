#!/usr/bin/env python3
"""Command latency (issues 3 and 6): sbatch, squeue, scontrol show job and
sinfo against Loom and a real Slurm 22.05, side by side, timed by hyperfine.

Starts a one-node Loom cluster (`loom up`, the --build's daemons) and, as
root with Debian's slurm-wlm, a one-host Slurm (bench/slurm_local.sh,
MaxArraySize raised), puts one held 1,000,000-task array in each queue (the
squeue case of issue 6), then times each command with

    hyperfine -N --warmup W --runs R --export-json ... CMD

(-N: no shell, so the figure is the command's own fork+exec+run) for each
system in turn, in --rounds rounds taking turns, then its CPU time with
`perf stat -e task-clock -r R` (when perf is installed), and prints the
median over rounds of hyperfine's mean and median and of the CPU time. --base BUILD adds the commands of
another Loom build (e.g. the tree before a change) against the same Loom
controller, for a before/after figure. The sbatch line submits held jobs
(`sbatch -H --wrap=true -o /dev/null`); every run adds one to the queue.

  bench/cli.py [--build build/hcli-rel] [--base /tmp/base/build] [--runs 200]
               [--warmup 20] [--rounds 3] [--no-slurm]

A measurement, never a test assertion. Figures and their reading are in
bench/README.md ("cli.py").
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BIG = 1000000

COMMANDS = [  # the submission last (main() relies on it)
    ("squeue", ["squeue"]),
    ("scontrol show job", ["scontrol", "show", "job", "{array}"]),
    ("sinfo", ["sinfo"]),
    ("sbatch -H", ["sbatch", "-H", "--wrap=true", "-o", "/dev/null"]),
]


def start_loom(build, tmp):
    rundir = os.path.join(tmp, "loom")
    subprocess.run([os.path.join(build, "bin", "loom"), "up", "--dir", rundir, "--nodes", "1",
                    "--cpus-per-node", "8", "--gpus-per-node", "0",
                    "--set", "MaxJobCount=1100000", "--set", f"MaxArraySize={BIG + 1}"],
                   check=True, stdout=subprocess.DEVNULL)
    return rundir, os.path.join(rundir, "etc", "slurm.conf")


def start_slurm(tmp):
    if shutil.which("slurmctld") is None or os.geteuid() != 0:
        return None, None
    d = os.path.join(tmp, "slurm")
    r = subprocess.run([os.path.join(HERE, "slurm_local.sh"), "start", d, "8", str(BIG + 1)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print("real Slurm did not start:", r.stderr.strip(), file=sys.stderr)
        return None, None
    return d, os.path.join(d, "slurm.conf")


def submit_big(bindir, conf):
    sbatch = os.path.join(bindir, "sbatch") if bindir else "sbatch"
    out = subprocess.run([sbatch, "--parsable", "-H", f"--array=0-{BIG - 1}", "--wrap=true",
                          "-o", "/dev/null"], env=dict(os.environ, SLURM_CONF=conf),
                         check=True, capture_output=True, text=True).stdout
    return out.strip().split(";")[0]


def hyperfine(argv, conf, runs, warmup, tmp):
    out = os.path.join(tmp, "hf.json")
    subprocess.run(["hyperfine", "-N", "--warmup", str(warmup), "--runs", str(runs),
                    "--export-json", out, "--style", "none", " ".join(argv)],
                   env=dict(os.environ, SLURM_CONF=conf), check=True,
                   stdout=subprocess.DEVNULL)
    with open(out) as f:
        r = json.load(f)["results"][0]
    return r["mean"] * 1000, r["median"] * 1000


def cpu_ms(argv, conf, runs):
    """The command's own CPU (user + system, ms, mean of runs) from perf stat:
    what the command costs whatever else the host is doing, where the wall
    time also holds the waits for a CPU on a loaded host."""
    if shutil.which("perf") is None:
        return float("nan")
    r = subprocess.run(["perf", "stat", "-x", ",", "-e", "task-clock", "-r", str(runs)] + argv,
                       env=dict(os.environ, SLURM_CONF=conf), capture_output=True, text=True)
    for line in r.stderr.splitlines():
        f = line.split(",")
        if len(f) > 2 and f[2].startswith("task-clock"):
            return float(f[0])
    return float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--base", help="another Loom build whose commands are timed too")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-slurm", action="store_true")
    a = ap.parse_args()
    if shutil.which("hyperfine") is None:
        sys.exit("hyperfine is not installed (apt-get install hyperfine)")
    tmp = tempfile.mkdtemp(prefix="loom-cli-bench-")
    loom_dir, loom_conf = start_loom(a.build, tmp)
    slurm_dir, slurm_conf = (None, None) if a.no_slurm else start_slurm(tmp)
    systems = [("loom", os.path.join(a.build, "bin"), loom_conf)]
    if a.base:
        systems.insert(0, ("loom base", os.path.join(a.base, "bin"), loom_conf))
    if slurm_conf:
        systems.append(("slurm", None, slurm_conf))
    res = {}

    def run_all(label, argv):
        for name, bindir, conf in systems:
            cmd = [w.replace("{array}", arrays[conf]) for w in argv]
            if bindir:
                cmd[0] = os.path.join(bindir, cmd[0])
            res.setdefault((label, name), []).append(
                hyperfine(cmd, conf, a.runs, a.warmup, tmp) + (cpu_ms(cmd, conf, a.runs),))

    arrays = {}
    try:
        arrays[loom_conf] = submit_big(os.path.join(a.build, "bin"), loom_conf)
        if slurm_conf:
            arrays[slurm_conf] = submit_big(None, slurm_conf)
        # Queries first, in rounds taking turns; submissions last: every
        # sbatch run adds a held job that the queries would then print.
        for _ in range(a.rounds):
            for label, argv in COMMANDS[:-1]:
                run_all(label, argv)
        for _ in range(a.rounds):
            run_all(*COMMANDS[-1])
    finally:
        subprocess.run([os.path.join(a.build, "bin", "loom"), "down", "--dir", loom_dir],
                       stdout=subprocess.DEVNULL)
        if slurm_dir:
            subprocess.run([os.path.join(HERE, "slurm_local.sh"), "stop", slurm_dir])
    names = [s[0] for s in systems]
    print("\n| command | " + " | ".join(f"{n} mean / median / CPU ms" for n in names) +
          (" | slurm / loom (median) |" if slurm_conf else " |"))
    print("|---" * (len(names) + 1 + bool(slurm_conf)) + "|")
    for label, _ in COMMANDS:
        cells, med = [], {}
        for n in names:
            runs = res[(label, n)]
            mean = statistics.median(r[0] for r in runs)
            med[n] = statistics.median(r[1] for r in runs)
            cpu = statistics.median(r[2] for r in runs)
            cells.append(f"{mean:.2f} / {med[n]:.2f} / {cpu:.2f}")
        ratio = f" | {med['slurm'] / med['loom']:.1f}" if slurm_conf else ""
        print(f"| {label} | " + " | ".join(cells) + ratio + " |")


if __name__ == "__main__":
    main()
