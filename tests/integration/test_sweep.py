"""loom sweep (issue 6, "Beyond Slurm"): a grid or a table of parameters as one
job array; each task gets its row as arguments and LOOM_PARAM_* variables;
`loom sweep status` shows parameters against state, exit code and elapsed."""
import json

ECHO = ["sh", "-c", 'echo "$LOOM_SWEEP_PARAMS|$LOOM_PARAM_LR|$LOOM_PARAM_BATCH_SIZE|$*"', "x"]


def loom(cluster, *args, check=True):
    env = {"LOOM_STATE_DIR": str(cluster.root / "loomstate")}
    return cluster.run("loom", *args, env=env, check=check)


def submit(cluster, *args):
    return int(loom(cluster, "sweep", "--parsable", *args).stdout.strip())


def wait_array(cluster, a, n):
    def done():
        recs = cluster.rpc("job.info", job_ids=[a])["jobs"]
        return len(recs) == n and all(cluster.state_of(r) in ("COMPLETED", "FAILED")
                                      and "COMPLETING" not in r["state"] for r in recs)
    cluster.wait_for(done, "sweep %d to finish" % a, timeout=60)


def out(cluster, a, t):
    return (cluster.work / ("slurm-%d_%d.out" % (a, t))).read_text()


def test_grid_args_env_and_status(cluster):
    a = submit(cluster, "lr=1e-3,1e-4", "batch-size=16,32,64", "--", *ECHO)
    wait_array(cluster, a, 6)
    rows = [("1e-3", "16"), ("1e-3", "32"), ("1e-3", "64"),
            ("1e-4", "16"), ("1e-4", "32"), ("1e-4", "64")]
    for t, (lr, bs) in enumerate(rows):
        params = "--lr=%s --batch-size=%s" % (lr, bs)
        assert out(cluster, a, t) == "%s|%s|%s|%s\n" % (params, lr, bs, params)
    status = loom(cluster, "sweep", "status", str(a)).stdout.splitlines()
    assert status[0].split() == ["TASK", "lr", "batch-size", "STATE", "EXIT", "ELAPSED", "JOBID"]
    for t, (lr, bs) in enumerate(rows):
        cells = status[t + 1].split()
        assert cells[:5] == [str(t), lr, bs, "COMPLETED", "0:0"], cells
    assert status[-1] == "6 tasks: 6 COMPLETED"
    js = json.loads(loom(cluster, "sweep", "status", str(a), "--json").stdout)
    assert js[4]["params"] == {"lr": "1e-4", "batch-size": "32"}
    assert js[4]["state"] == "COMPLETED" and js[4]["exit_code"] == 0


def test_files_and_failures(cluster):
    (cluster.work / "rows.csv").write_text('lr,batch-size\n0.1,8\n"0.2",16\n0.3,3\n')
    a = submit(cluster, "--file", "rows.csv", "--",
               "sh", "-c", 'echo "$LOOM_PARAM_LR"; [ "$LOOM_PARAM_BATCH_SIZE" -gt 4 ]')
    wait_array(cluster, a, 3)
    assert [out(cluster, a, t) for t in range(3)] == ["0.1\n", "0.2\n", "0.3\n"]
    status = loom(cluster, "sweep", "status", str(a)).stdout.splitlines()
    assert status[3].split()[:5] == ["2", "0.3", "3", "FAILED", "1:0"]
    assert status[-1] == "3 tasks: 2 COMPLETED, 1 FAILED"
    (cluster.work / "rows.json").write_text('[{"lr": 0.5, "opt": "adam"}, {"lr": 1}]')
    b = submit(cluster, "--file=rows.json", "--", *ECHO)
    wait_array(cluster, b, 2)
    assert out(cluster, b, 0).startswith("--lr=0.5 --opt=adam|0.5|")
    assert out(cluster, b, 1).startswith("--lr=1|1|")
    (cluster.work / "grid.json").write_text('{"lr": [1, 2], "seed": 7}')
    c = submit(cluster, "--file=grid.json", "--", *ECHO)
    wait_array(cluster, c, 2)
    assert out(cluster, c, 1).startswith("--lr=2 --seed=7|2|")


def test_batch_scripts(cluster):
    sh = cluster.work / "train.sh"
    sh.write_text("#!/bin/bash\n#SBATCH --output=t_%A_%a.txt\n#SBATCH -J mine\n\n"
                  'echo "$SLURM_JOB_NAME $# $1 $2 $LOOM_PARAM_LR"\n')
    a = submit(cluster, "--throttle=1", "lr=1,2", "train.sh", "keep")
    wait_array(cluster, a, 2)
    assert (cluster.work / ("t_%d_1.txt" % a)).read_text() == "mine 2 keep --lr=2 2\n"
    py = cluster.work / "train.py"
    py.write_text("#!/usr/bin/env python3\n#SBATCH --output=p_%a.txt\n"
                  "import os, sys\nprint(sys.argv[1:], os.environ['LOOM_PARAM_LR'])\n")
    py.chmod(0o755)
    b = submit(cluster, "lr=3", str(py))
    wait_array(cluster, b, 1)
    assert (cluster.work / "p_0.txt").read_text() == "['--lr=3'] 3\n"
    recs = cluster.rpc("job.info", job_ids=[b])["jobs"]
    assert recs[0]["name"] == "train.py"


def test_throttle_and_errors(cluster):
    a = submit(cluster, "--throttle", "2", "n=1,2,3,4", "--", "sleep", "1")
    rec = cluster.rpc("job.info", job_ids=[a])["jobs"]
    assert any(r.get("array_max_tasks") == 2 for r in rec)
    for args, msg in [
        (["--", "true"], "Usage: loom sweep"),
        (["lr=1", "--array=0-3", "true"], "no --array"),
        (["--bogus", "lr=1", "true"], "unknown option '--bogus'"),
        (["lr=", "true"], "parameter 'lr=' has no values"),
        (["--file", "nope.csv", "true"], "cannot read nope.csv"),
    ]:
        p = loom(cluster, "sweep", *args, check=False)
        assert p.returncode == 1 and msg in p.stderr, (args, p.stderr)
    (cluster.work / "bad.csv").write_text("lr,bs\n1\n")
    p = loom(cluster, "sweep", "--file", "bad.csv", "true", check=False)
    assert p.returncode == 1 and "bad.csv:2: 1 fields, the header has 2" in p.stderr
    p = loom(cluster, "sweep", "status", "424242", check=False)
    assert p.returncode == 1 and "no sweep 424242" in p.stderr
    cluster.run("scancel", str(a), check=True)
