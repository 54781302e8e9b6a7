#!/usr/bin/env python3
"""Step launch benchmark: `srun -N K -n K*8 true` against Loom and real Slurm.

For K = 1, 2, 4, 8 emulated nodes (`loom up --nodes K --cpus-per-node 8`)
runs the command R times from outside an allocation (srun creates the
allocation, launches 8 tasks per node through the nodes' step supervisors,
collects their exits, gives the allocation back) and reports the median and
95th percentile wall time. Real Slurm (Debian's slurm-wlm, one host through
bench/slurm_local.sh, when installed and we are root) can run one slurmd per
host only (slurm-wlm is built without --enable-multiple-slurmd), so it is
measured for K = 1, and the table compares K = 1; the other rows show how
Loom's launch time grows with the node count. Also measures `srun -n 8 true`
inside an allocation (the step alone). Loom K = 1 and Slurm take turns run
by run (warm-up, then one Loom run, one Slurm run, ...), so both see the
same machine load. This is a measurement, never a test assertion.

  bench/srun.py [--build build/release] [--runs 20] [--nodes 1,2,4,8]

Figures (2026-11-21, `bench/srun.py --build <RelWithDebInfo build of e0701d3> --runs 30`,
milliseconds; the 2-core build machine shared with other jobs, load average
8 to 10 during the run):

  command                                  loom (med / p95)   slurm (med / p95)   slurm/loom
  srun -N 1 -n 8 true                       41.8 /   58.6      181.9 /  201.7        4.4
  srun -n 8 true (in salloc)                36.4 /   55.0      182.8 /  208.5        5.0
  srun -N 2 -n 16 true                      50.2 /   72.6          -
  srun -N 4 -n 32 true                      75.9 /   96.1          -
  srun -N 8 -n 64 true                     106.5 /  127.6          -

The ratio moves with the machine's load: 20 runs a minute earlier gave 4.3x
and 6.8x, and at load 9 to 11 (before a1a4f70) 3.3x and 3.8x. Real Slurm
has one node here, so K > 1 is Loom alone.
"""
import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def timed_once(env, argv):
    t = time.perf_counter()
    r = subprocess.run(argv, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(argv), r.returncode, r.stderr))
    return time.perf_counter() - t


def stats(times):
    s = sorted(times)
    p95 = s[min(len(s) - 1, int(round(0.95 * (len(s) - 1))))]
    return statistics.median(s), p95


# Inside an allocation: time each step launch from the same process; one
# line per step on request (a line on stdin), so that two systems can take
# turns.
STEP_LOOP = """
import subprocess, sys, time
for _ in sys.stdin:
    t = time.perf_counter()
    subprocess.run([{srun!r}, "-n", "8", "true"], check=True)
    print("%.6f" % (time.perf_counter() - t), flush=True)
"""


class Side:
    """One system (Loom with K nodes, or real Slurm) ready to be timed."""

    def __init__(self, name, env, srun, nodes):
        self.name, self.env, self.srun, self.nodes = name, env, srun, nodes
        self.argv = [srun, "-N", str(nodes), "-n", str(nodes * 8), "true"]
        self.times = {"alloc+step": [], "step only": []}
        self.loop = None

    def warm(self):
        for _ in range(2):  # page cache, first connections
            timed_once(self.env, self.argv)

    def alloc_step(self):
        self.times["alloc+step"].append(timed_once(self.env, self.argv))

    def start_loop(self, salloc):
        self.loop = subprocess.Popen([salloc, "-Q", "-N1", "-n8", sys.executable, "-c",
                                      STEP_LOOP.format(srun=self.srun)], env=self.env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def step_only(self):
        self.loop.stdin.write("\n")
        self.loop.stdin.flush()
        self.times["step only"].append(float(self.loop.stdout.readline()))

    def end_loop(self):
        self.loop.stdin.close()
        self.loop.wait(timeout=60)


def loom_up(build, nodes, tmp):
    bindir = os.path.join(build, "bin")
    rundir = os.path.join(tmp, "loom-%d" % nodes)
    subprocess.run([os.path.join(bindir, "loom"), "up", "--dir", rundir, "--nodes", str(nodes),
                    "--cpus-per-node", "8", "--gpus-per-node", "0"], check=True,
                   capture_output=True)
    env = dict(os.environ, SLURM_CONF=os.path.join(rundir, "etc", "slurm.conf"),
               PATH=bindir + ":" + os.environ.get("PATH", ""))
    return Side("loom", env, os.path.join(bindir, "srun"), nodes), rundir


def loom_down(build, rundir):
    subprocess.run([os.path.join(build, "bin", "loom"), "down", "--dir", rundir],
                   capture_output=True)


def slurm_up(tmp):
    if os.geteuid() != 0:
        return None, "not root"
    d = os.path.join(tmp, "slurm")
    r = subprocess.run([os.path.join(HERE, "slurm_local.sh"), "start", d, "8"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stderr.strip() or "slurm_local.sh failed")
    env = dict(os.environ, SLURM_CONF=os.path.join(d, "slurm.conf"))
    return Side("slurm", env, "srun", 1), d


def slurm_down(d):
    for name in ("slurmd.pid", "slurmctld.pid"):  # stop exactly what was started
        try:
            with open(os.path.join(d, name)) as f:
                os.kill(int(f.read().strip()), signal.SIGTERM)
        except (OSError, ValueError):
            pass


def take_turns(sides, runs, salloc):
    """Each measurement once per side in turn: the same machine load for all."""
    for s in sides:
        s.warm()
    for _ in range(runs):
        for s in sides:
            s.alloc_step()
    if sides[0].nodes == 1:
        for s, sa in zip(sides, salloc):
            s.start_loop(sa)
        for _ in range(runs):
            for s in sides:
                s.step_only()
        for s in sides:
            s.end_loop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--nodes", default="1,2,4,8")
    ap.add_argument("--no-slurm", action="store_true")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="loom-bench-srun-")
    slurm, sdir = (None, "--no-slurm") if a.no_slurm else slurm_up(tmp)
    loom = {}
    try:
        for k in [int(x) for x in a.nodes.split(",")]:
            side, rundir = loom_up(a.build, k, tmp)
            try:
                sides = [side] + ([slurm] if slurm and k == 1 else [])
                take_turns(sides, a.runs, [os.path.join(a.build, "bin", "salloc"), "salloc"])
                loom[k] = side
            finally:
                loom_down(a.build, rundir)
    finally:
        if slurm:
            slurm_down(sdir)
    print("\nsrun launch time, %d runs each (median / p95, milliseconds)" % a.runs)
    print("%-36s %18s %18s %10s" % ("command", "loom", "slurm", "slurm/loom"))
    for k, side in sorted(loom.items()):
        for what, times in side.times.items():
            if not times:
                continue
            med, p95 = stats(times)
            cmd = ("srun -N %d -n %d true" % (k, 8 * k)) if what == "alloc+step" else \
                  "srun -n 8 true (in salloc)"
            st = slurm.times[what] if (slurm and k == 1) else None
            s = stats(st) if st else None
            sl = "%8.1f / %7.1f" % (s[0] * 1e3, s[1] * 1e3) if s else "-"
            ratio = "%10.1f" % (s[0] / med) if s else ""
            print("%-36s %8.1f / %7.1f %18s %s" % (cmd, med * 1e3, p95 * 1e3, sl, ratio))
    if not slurm:
        print("(real Slurm not measured: %s)" % sdir)


if __name__ == "__main__":
    main()
