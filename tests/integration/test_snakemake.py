"""Snakemake's built-in SLURM executor (`snakemake --slurm`, snakemake 7.x as
Debian 12 ships it) runs a three-rule workflow on Loom unchanged.

The executor (snakemake/executors/slurm/slurm_submit.py) checks the account
with `sacctmgr -n -s list user U format=account%20`, submits each rule with
`sbatch -J .. -o .snakemake/slurm_logs/rule_X/%j.log --export=ALL -A .. -p ..
-t .. --mem .. --cpus-per-task=.. -D .. --wrap=..`, takes the job id as the last
word sbatch prints, polls `sacct -P -n --format=JobIdRaw,State -j ID` (and
`scontrol show jobid -dd ID` when sacct has no row yet), and inside the job
runs the rule with `srun -n1 --cpu-bind=q python3 -m snakemake ...`.
--max-status-checks-per-second 1 (snakemake 7 turns any value above 1 into
0.03, one sacct every 33 s) keeps the test short.

Skipped when snakemake is not installed (apt-get install snakemake)."""
import os
import shutil
import subprocess

import pytest

from conftest import need
from test_acct_link import acct_beside

SNAKEFILE = '''
rule all:
    input: "c.txt"

rule a:
    output: "a.txt"
    resources: mem_mb=200, runtime=5, cpus_per_task=1, slurm_partition="debug"
    shell: "echo a > {output}"

rule b:
    input: "a.txt"
    output: "b.txt"
    threads: 2
    resources: mem_mb=300, runtime=5, cpus_per_task=2, slurm_partition="debug"
    shell: "cat {input} > {output}; echo b-$SLURM_CPUS_PER_TASK >> {output}"

rule c:
    input: "b.txt"
    output: "c.txt"
    resources: mem_mb=100, runtime=5, cpus_per_task=1
    shell: "cat {input} > {output}; echo c >> {output}"
'''


def test_snakemake_slurm_workflow(make_cluster):
    exe = shutil.which("snakemake")
    if exe is None:
        pytest.skip("snakemake is not installed (apt-get install snakemake)")
    need("loomdbd", "sacct", "sacctmgr", "sbatch", "srun", "squeue", "scontrol", "sinfo")
    with acct_beside(make_cluster, cpus=4, gpus=0) as (c, a):
        for args in (("add", "account", "wfacct"),
                     ("add", "user", c.user, "account=wfacct")):
            c.run("sacctmgr", "-i", *args, check=True)
        wd = c.work / "snake"
        wd.mkdir()
        (wd / "Snakefile").write_text(SNAKEFILE)
        env = dict(c.env, USER=c.user, HOME=str(wd))
        p = subprocess.run([exe, "--slurm", "--jobs", "3", "--default-resources",
                            "slurm_account=wfacct", "--max-status-checks-per-second", "1",
                            "--latency-wait", "10"],
                           cwd=str(wd), env=env, capture_output=True, text=True, timeout=240)
        log = p.stdout + p.stderr
        assert p.returncode == 0, log
        assert (wd / "c.txt").read_text() == "a\nb-2\nc\n", log
        assert "4 of 4 steps (100%) done" in log
        rows = c.run("sacct", "-X", "-P", "-n", "-o", "JobName,Account,Partition,ReqMem,State",
                     check=True).stdout.split()
        snake = [r.split("|") for r in rows if r.startswith("snakejob")]
        assert len(snake) == 3, rows
        assert all(r[1] == "wfacct" and r[2] == "debug" and r[4] == "COMPLETED"
                   for r in snake), snake
        assert sorted(r[3] for r in snake) == ["100M", "200M", "300M"], snake
        assert os.path.isdir(wd / ".snakemake" / "slurm_logs" / "rule_a")
