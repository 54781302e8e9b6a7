#!/usr/bin/env python3
"""Batch-job benchmark: the same workload against Loom and real Slurm, side by side.

Starts a one-node Loom cluster (`loom up`) and, when Debian's slurm-wlm is
installed and we are root, a one-host real Slurm (bench/slurm_local.sh) with the
same CPU count; runs on each:
  - sbatch latency (median, p95) over N sequential `sbatch --wrap=true`,
    and over the P held submissions (no job runs beside them),
  - the submission rate of those N submissions,
  - the end-to-end rate until all N have finished,
  - squeue latency with P pending (held) jobs in the queue,
  - the controller's peak RSS (VmHWM),
and the host's process-spawn rate (fork+exec of /bin/true), then prints a table
with Slurm/Loom ratios. This is a measurement, never a test assertion.
Figures measured so far, and what bounds them: bench/README.md.

  bench/batch.py [--build build/release] [--jobs 2000] [--pending 10000] [--cpus 8]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def spawn_rate(seconds=2.0):
    """fork+exec of /bin/true per second, from a tiny shell loop."""
    n = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        subprocess.run(["/bin/true"])
        n += 1
    return n / (time.perf_counter() - start)


class System:
    """One workload manager under test: its commands, environment and controller pid."""

    def __init__(self, name, bindir, conf, ctld_name):
        self.name, self.bindir, self.ctld_name = name, bindir, ctld_name
        self.env = dict(os.environ, SLURM_CONF=conf)

    def cmd(self, prog):
        return os.path.join(self.bindir, prog) if self.bindir else prog

    def run(self, *args, check=True):
        r = subprocess.run([self.cmd(args[0])] + list(args[1:]), env=self.env,
                           capture_output=True, text=True)
        if check and r.returncode != 0:
            raise RuntimeError(f"{self.name}: {' '.join(args)}: {r.stderr.strip()}")
        return r.stdout

    def ctld_pid(self):
        out = subprocess.run(["pgrep", "-f", self.ctld_pattern()], capture_output=True, text=True)
        pids = [int(p) for p in out.stdout.split()]
        return pids[0] if pids else None

    def ctld_pattern(self):
        return f"{self.ctld_name} .*-f {self.env['SLURM_CONF']}"

    def peak_rss_mib(self):
        pid = self.ctld_pid()
        if not pid:
            return float("nan")
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
        return float("nan")

    def active_jobs(self):
        out = self.run("squeue", "-h", "-t", "PD,R,CG,CF", "-o", "%i", check=False)
        return len(out.split())


def submit_many(sysm, n, extra=()):
    lat = []
    t0 = time.perf_counter()
    for _ in range(n):
        s = time.perf_counter()
        sysm.run("sbatch", "--parsable", *extra, "--wrap=true", "-o", "/dev/null")
        lat.append(time.perf_counter() - s)
    return lat, time.perf_counter() - t0


def wait_drained(sysm, timeout):
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        if sysm.active_jobs() == 0:
            return True
        time.sleep(0.05)
    return False


def measure(sysm, njobs, npending):
    res = {}
    t0 = time.perf_counter()
    lat, total = submit_many(sysm, njobs)
    lat.sort()
    res["sbatch median ms"] = statistics.median(lat) * 1000
    res["sbatch p95 ms"] = lat[int(len(lat) * 0.95) - 1] * 1000
    res["submit rate /s"] = njobs / total
    drained = wait_drained(sysm, 1800)
    res["end-to-end rate /s"] = njobs / (time.perf_counter() - t0) if drained else float("nan")
    held, _ = submit_many(sysm, npending, extra=("-H",))
    held.sort()
    # The same submissions with nothing running beside them (held jobs).
    res["sbatch -H median ms"] = statistics.median(held) * 1000
    res["sbatch -H p95 ms"] = held[int(len(held) * 0.95) - 1] * 1000
    sq = []
    for _ in range(10):
        s = time.perf_counter()
        sysm.run("squeue")
        sq.append(time.perf_counter() - s)
    res[f"squeue ms ({npending} pending)"] = statistics.median(sq) * 1000
    res["controller peak RSS MiB"] = sysm.peak_rss_mib()
    sysm.run("scancel", "-u", os.environ.get("USER", "root"), check=False)
    return res


def start_loom(build, cpus, tmp):
    bindir = os.path.join(build, "bin")
    rundir = os.path.join(tmp, "loom")
    subprocess.run([os.path.join(bindir, "loom"), "up", "--dir", rundir, "--nodes", "1",
                    "--cpus-per-node", str(cpus), "--gpus-per-node", "0",
                    # the same job-count limit as the real Slurm of slurm_local.sh
                    "--set", "MaxJobCount=1100000"], check=True,
                   stdout=subprocess.DEVNULL)
    return System("loom", bindir, os.path.join(rundir, "etc", "slurm.conf"), "loomctld"), rundir


def start_slurm(cpus, tmp):
    if not shutil.which("slurmctld") or os.geteuid() != 0:
        return None
    d = os.path.join(tmp, "slurm")
    r = subprocess.run([os.path.join(HERE, "slurm_local.sh"), "start", d, str(cpus)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print("real Slurm did not start:", r.stderr.strip(), file=sys.stderr)
        return None
    return System("slurm", None, os.path.join(d, "slurm.conf"), "slurmctld"), d


def better_ratio(key, loom, slurm):
    """How many times better Loom is: latencies and RSS lower is better, rates higher."""
    if loom != loom or slurm != slurm or loom == 0 or slurm == 0:
        return float("nan")
    return loom / slurm if "rate" in key else slurm / loom


def print_table(loom, slurm, spawn):
    print(f"\n{'metric':32} {'loom':>12} {'slurm':>12} {'loom better x':>14}")
    for key in loom:
        s = slurm.get(key, float("nan")) if slurm else float("nan")
        print(f"{key:32} {loom[key]:12.2f} {s:12.2f} {better_ratio(key, loom[key], s):14.1f}")
    print(f"{'host spawn rate /s':32} {spawn:12.1f}")
    e2e = loom.get("end-to-end rate /s", float("nan"))
    print(f"{'loom end-to-end / spawn rate':32} {e2e / spawn:12.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--jobs", type=int, default=2000)
    ap.add_argument("--pending", type=int, default=10000)
    ap.add_argument("--cpus", type=int, default=8)
    ap.add_argument("--no-slurm", action="store_true")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="loom-bench-")
    spawn = spawn_rate()
    loom_sys, loom_dir = start_loom(a.build, a.cpus, tmp)
    slurm = None if a.no_slurm else start_slurm(a.cpus, tmp)
    try:
        loom_res = measure(loom_sys, a.jobs, a.pending)
        slurm_res = measure(slurm[0], a.jobs, a.pending) if slurm else None
    finally:
        subprocess.run([os.path.join(a.build, "bin", "loom"), "down", "--dir", loom_dir],
                       stdout=subprocess.DEVNULL)
        if slurm:
            subprocess.run([os.path.join(HERE, "slurm_local.sh"), "stop", slurm[1]])
    print_table(loom_res, slurm_res, spawn)


if __name__ == "__main__":
    main()
