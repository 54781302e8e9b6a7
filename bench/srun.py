#!/usr/bin/env python3
"""Step launch benchmark: `srun -N K -n K*8 true` against Loom and real Slurm.

For K = 1, 2, 4, 8 emulated nodes (`loom up --nodes K --cpus-per-node 8`)
runs the command R times from outside an allocation (srun creates the
allocation, launches 8 tasks per node through the nodes' step supervisors,
collects their exits, gives the allocation back) and reports the median and
95th percentile wall time. Real Slurm (Debian's slurm-wlm, one host through
bench/slurm_local.sh, when installed and we are root) can run one slurmd per
host only, so it is measured for K = 1, and the table compares K = 1; the
other rows show how Loom's launch time grows with the node count. Also
measures `srun -n 8 true` inside an allocation (the step alone). This is a
measurement, never a test assertion.

  bench/srun.py [--build build/release] [--runs 20] [--nodes 1,2,4,8]
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


def timed(env, argv, runs):
    """Wall times (s) of runs executions of argv; fails loudly on a bad exit."""
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        r = subprocess.run(argv, env=env, capture_output=True, text=True)
        out.append(time.perf_counter() - t)
        if r.returncode != 0:
            raise RuntimeError("%s failed (%d): %s" % (" ".join(argv), r.returncode, r.stderr))
    return out


def stats(times):
    s = sorted(times)
    p95 = s[min(len(s) - 1, int(round(0.95 * (len(s) - 1))))]
    return statistics.median(s), p95


def loom_run(build, nodes, runs, tmp):
    bindir = os.path.join(build, "bin")
    rundir = os.path.join(tmp, "loom-%d" % nodes)
    subprocess.run([os.path.join(bindir, "loom"), "up", "--dir", rundir, "--nodes", str(nodes),
                    "--cpus-per-node", "8", "--gpus-per-node", "0"], check=True,
                   capture_output=True)
    env = dict(os.environ, SLURM_CONF=os.path.join(rundir, "etc", "slurm.conf"),
               PATH=bindir + ":" + os.environ.get("PATH", ""))
    try:
        srun = os.path.join(bindir, "srun")
        argv = [srun, "-N", str(nodes), "-n", str(nodes * 8), "true"]
        timed(env, argv, 2)  # warm up (page cache, first connections)
        res = {"alloc+step": stats(timed(env, argv, runs))}
        if nodes == 1:
            inner = [os.path.join(bindir, "salloc"), "-Q", "-N1", "-n8", sys.executable, "-c",
                     STEP_LOOP.format(runs=runs, srun=srun)]
            r = subprocess.run(inner, env=env, capture_output=True, text=True, check=True)
            res["step only"] = stats([float(x) for x in r.stdout.split()])
        return res
    finally:
        subprocess.run([os.path.join(bindir, "loom"), "down", "--dir", rundir],
                       capture_output=True)


# Inside an allocation: time each step launch from the same process.
STEP_LOOP = """
import subprocess, time
out = []
for _ in range({runs}):
    t = time.perf_counter()
    subprocess.run([{srun!r}, "-n", "8", "true"], check=True)
    out.append(time.perf_counter() - t)
print(" ".join("%.6f" % x for x in out))
"""


def slurm_run(runs, tmp):
    if os.geteuid() != 0:
        return None, "not root"
    d = os.path.join(tmp, "slurm")
    r = subprocess.run([os.path.join(HERE, "slurm_local.sh"), "start", d, "8"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stderr.strip() or "slurm_local.sh failed")
    env = dict(os.environ, SLURM_CONF=os.path.join(d, "slurm.conf"))
    try:
        argv = ["srun", "-N", "1", "-n", "8", "true"]
        timed(env, argv, 2)
        res = {"alloc+step": stats(timed(env, argv, runs))}
        inner = ["salloc", "-Q", "-N1", "-n8", sys.executable, "-c", STEP_LOOP.format(runs=runs, srun="srun")]
        r = subprocess.run(inner, env=env, capture_output=True, text=True, check=True)
        res["step only"] = stats([float(x) for x in r.stdout.split()])
        return res, None
    finally:
        for name in ("slurmd.pid", "slurmctld.pid"):  # stop exactly what was started
            try:
                with open(os.path.join(d, name)) as f:
                    os.kill(int(f.read().strip()), signal.SIGTERM)
            except (OSError, ValueError):
                pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--nodes", default="1,2,4,8")
    ap.add_argument("--no-slurm", action="store_true")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="loom-bench-srun-")
    loom = {}
    for k in [int(x) for x in a.nodes.split(",")]:
        loom[k] = loom_run(a.build, k, a.runs, tmp)
    slurm, why = (None, "--no-slurm") if a.no_slurm else slurm_run(a.runs, tmp)
    print("\nsrun launch time, %d runs each (median / p95, milliseconds)" % a.runs)
    print("%-36s %18s %18s %10s" % ("command", "loom", "slurm", "slurm/loom"))
    for k, res in sorted(loom.items()):
        for what, (med, p95) in res.items():
            cmd = ("srun -N %d -n %d true" % (k, 8 * k)) if what == "alloc+step" else \
                  "srun -n 8 true (in salloc)"
            s = slurm.get(what) if (slurm and k == 1) else None
            sl = "%8.1f / %7.1f" % (s[0] * 1e3, s[1] * 1e3) if s else "-"
            ratio = "%10.1f" % (s[0] / med) if s else ""
            print("%-36s %8.1f / %7.1f %18s %s" % (cmd, med * 1e3, p95 * 1e3, sl, ratio))
    if not slurm:
        print("(real Slurm not measured: %s)" % why)


if __name__ == "__main__":
    main()
