"""sbatch against a real Loom cluster: what it prints, what it submits, and
what it refuses (CLI_SPEC §1, §0.9, §0.10). Expected texts are the ones real
Slurm 22.05 prints for the same input (captured side by side)."""
import os
import re
import resource
import subprocess
import time

import pytest

from conftest import BIN, SANITIZER_MARKS


def sbatch(cluster, *args, rc=0, **kw):
    p = cluster.run("sbatch", *args, **kw)
    assert not any(m in p.stderr for m in SANITIZER_MARKS), p.stderr
    if rc is not None:
        assert p.returncode == rc, "sbatch %s -> %d\n%s%s" % (args, p.returncode, p.stdout,
                                                              p.stderr)
    return p


def job_ids(cluster):
    return sorted(cluster.jobs())


def submitted(p):
    m = re.match(r"^Submitted batch job (\d+)\n$", p.stdout)
    assert m, p.stdout
    return int(m.group(1))


def test_submit_script_and_directives(cluster):
    script = cluster.work / "job.sh"
    script.write_text("#!/bin/sh\n#SBATCH -J fromdirective\n#SBATCH --time=5\n"
                      "#SBATCH -o out-%j.txt\necho hello from $SLURM_JOB_NAME\n")
    p = sbatch(cluster, str(script))
    assert p.stderr == ""
    jid = submitted(p)
    rec = cluster.wait_job(jid, "COMPLETED")
    assert rec["name"] == "fromdirective" and rec["time_limit"] == 5
    assert rec["command"] == str(script)
    assert rec["work_dir"] == str(cluster.work)
    out = cluster.work / ("out-%d.txt" % jid)
    cluster.wait_for(lambda: out.exists() and out.read_text(), "output file")
    assert out.read_text() == "hello from fromdirective\n"
    # the command line wins over the directive
    jid = submitted(sbatch(cluster, "-J", "fromcli", str(script)))
    assert cluster.job(jid)["name"] == "fromcli"


def test_wrap_stdin_parsable_quiet(cluster):
    jid = submitted(sbatch(cluster, "--wrap", "echo wrapped"))
    assert cluster.job(jid)["name"] == "wrap"
    p = sbatch(cluster, input="#!/bin/sh\necho from stdin\n")
    assert cluster.job(submitted(p))["name"] == "sbatch"
    p = sbatch(cluster, "--parsable", "--wrap=true")
    assert re.match(r"^\d+\n$", p.stdout)
    p = sbatch(cluster, "-Q", "--wrap=true")
    assert p.stdout == "" and p.stderr == ""
    p = sbatch(cluster, "--hold", "--parsable", "--wrap=true")
    rec = cluster.job(int(p.stdout))
    assert rec["reason"] == "JobHeldUser" and cluster.state_of(rec) == "PENDING"


def test_submit_environment(cluster):
    p = sbatch(cluster, "--wrap", "echo MARK=$LOOM_TEST_MARK; pwd", "-o", "env.out",
               env={"LOOM_TEST_MARK": "carried"})
    jid = submitted(p)
    cluster.wait_job(jid, "COMPLETED")
    text = (cluster.work / "env.out").read_text()
    assert "MARK=carried\n" in text and str(cluster.work) in text
    p = sbatch(cluster, "--export=NONE", "--wrap",
               "echo MARK=$LOOM_TEST_MARK; echo $SLURM_WORKING_CLUSTER", "-o", "none.out",
               env={"LOOM_TEST_MARK": "carried"})
    cluster.wait_job(submitted(p), "COMPLETED")
    # sbatch 22.05 gives every job SLURM_WORKING_CLUSTER, --export=NONE too
    port = re.search(r"^SlurmctldPort=(\d+)", cluster.conf.read_text(), re.M).group(1)
    mark, working = (cluster.work / "none.out").read_text().splitlines()
    assert mark == "MARK=" and re.fullmatch(r"loomtest:[^:]+:%s:9728:109" % port, working), working


def test_export_list_quotes(cluster):
    """--export splits at commas outside quotes and keeps the quotes, as sbatch
    22.05 shows (side by side: X="a,b" -> ["a,b"]); a listed value wins over the
    submitter's, a bare name takes the submitter's value, X= exports it empty."""
    env = {"X": "sub", "Y": "suby"}
    show = 'echo "X=[$X] Y=[$Y]"'
    cases = [
        (["--export=ALL,X=\"a,b\",Y=c"], {}, 'X=["a,b"] Y=[c]'),
        (["--export=ALL,X='a,b'"], {}, "X=['a,b'] Y=[suby]"),
        (["--export=NONE,X=1"], {}, "X=[1] Y=[]"),
        (["--export=X"], {}, "X=[sub] Y=[]"),
        (["--export=ALL,X="], {}, "X=[] Y=[suby]"),
        (["--export=Y,X=a\"b,c\"d"], {}, 'X=[a"b,c"d] Y=[suby]'),
        ([], {"SBATCH_EXPORT": "ALL,X=\"a,b\",Y=c"}, 'X=["a,b"] Y=[c]'),
    ]
    jobs = []
    for i, (args, extra, want) in enumerate(cases):
        out = "exp%d.out" % i
        p = sbatch(cluster, *args, "--parsable", "-o", out, "--wrap", show, env=dict(env, **extra))
        jobs.append((int(p.stdout), out, want))
    for jid, out, want in jobs:
        cluster.wait_job(jid, "COMPLETED")
        assert (cluster.work / out).read_text() == want + "\n", (jid, out)


def test_wait_exit_codes(cluster):
    p = sbatch(cluster, "-W", "--wrap", "exit 3", rc=3)
    assert re.match(r"^Submitted batch job \d+\n$", p.stdout)
    sbatch(cluster, "-W", "--wrap", "true", rc=0)
    sbatch(cluster, "--wait", "--wrap", "kill -9 $$", rc=1)


def test_test_only(cluster):
    before = job_ids(cluster)
    p = sbatch(cluster, "--test-only", "--wrap=true")
    assert re.match(r"^sbatch: Job \d+ to start at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d using 1 "
                    r"processors on nodes node\d in partition debug\n$", p.stderr), p.stderr
    assert p.stdout == ""
    assert job_ids(cluster) == before
    # a job no node could ever hold: sbatch 22.05's two lines, exit 1
    p = sbatch(cluster, "--test-only", "-n", "100", "--wrap=true", rc=1)
    assert p.stderr == "allocation failure: Requested node configuration is not available\n"
    p = sbatch(cluster, "--test-only", "-p", "nope", "--wrap=true", rc=1)
    assert p.stderr == ("sbatch: error: invalid partition specified: nope\n"
                        "allocation failure: Invalid partition name specified\n")
    # srun --test-only estimates the same way and runs nothing (srun 22.05.8)
    marker = str(cluster.root / "srun-test-only-ran")
    p = cluster.run("srun", "--test-only", "touch", marker)
    assert p.returncode == 0 and re.match(
        r"^srun: Job \d+ to start at \S+ using 1 processors on nodes node\d in partition "
        r"debug\n$", p.stderr), p.stderr
    p = cluster.run("srun", "--test-only", "-n", "100", "touch", marker)
    assert p.returncode == 1, p.stderr
    assert p.stderr == "allocation failure: Requested node configuration is not available\n"
    assert not os.path.exists(marker) and job_ids(cluster) == before


# Bad scripts and options: Slurm's words, its exit code, and no job. sbatch 22.05
# exits 255 (exit(-1)) for a bad option or option value, 1 for the rest.
REJECTED = [
    (["nosheb.sh"], "echo hi\n",
     "sbatch: error: This does not look like a batch script.  The first\n"
     "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
     "sbatch: error: For instance: #!/bin/sh\n"),
    (["dos.sh"], "#!/bin/sh\r\necho hi\r\n",
     "sbatch: error: Batch script contains DOS line breaks (\\r\\n)\n"
     "sbatch: error: instead of expected UNIX line breaks (\\n).\n"),
    (["empty.sh"], "", "sbatch: error: Batch script is empty!\n"),
    (["badtime.sh"], "#!/bin/sh\n#SBATCH -t abc\ntrue\n",
     re.compile(r"^sbatch: error: Invalid --time specification.*\n$"), 255),
    (["bogus.sh"], "#!/bin/sh\n#SBATCH --bogus\ntrue\n",
     re.compile(r"^sbatch: unrecognized option '--bogus'.*\nTry \"sbatch --help\" for more "
                r"information\n$"), 255),
    (["-t", "abc", "--wrap=true"], None, "sbatch: error: Invalid --time specification\n", 255),
    (["--bogus", "--wrap=true"], None,
     "sbatch: unrecognized option '--bogus'\nTry \"sbatch --help\" for more information\n", 255),
    (["--mem=abc", "--wrap=true"], None, "sbatch: error: Invalid --mem specification\n", 255),
    (["-J"], None,
     "sbatch: option requires an argument -- 'J'\nTry \"sbatch --help\" for more information\n",
     255),
    (["-N", "2-1", "--wrap=true"], None,
     "sbatch: error: Maximum node count 1 is less than minimum node count 2\n", 255),
    (["--begin=bogus", "--wrap=true"], None,
     "Invalid time specification (pos=0): bogus\nsbatch: error: Invalid --begin specification\n",
     255),
    (["-n", "0", "--wrap=true"], None,
     "sbatch: error: Invalid numeric value \"0\" for --ntasks.\n"),
    (["--gres=foo:1", "--wrap=true"], None,
     "sbatch: error: Invalid generic resource (gres) specification\n"),
    (["--reservation=nope", "--wrap=true"], None,
     "sbatch: error: Batch job submission failed: Requested reservation is invalid\n"),
    (["-L", "foo:2", "--wrap=true"], None,
     "sbatch: error: Batch job submission failed: Invalid license specification\n"),
    (["-p", "debug,nope", "--wrap=true"], None,
     "sbatch: error: invalid partition specified: nope\n"
     "sbatch: error: Batch job submission failed: Invalid partition name specified\n"),
    (["nonexist.sh"], None, "sbatch: error: Unable to open file nonexist.sh\n"),
    (["-p", "nope", "--wrap=true"], None,
     re.compile(r"^(sbatch: error: .*\n)?sbatch: error: Batch job submission failed: Invalid "
                r"partition name specified\n$")),
    (["--mem=999999", "--wrap=true"], None,
     re.compile(r"sbatch: error: Batch job submission failed: Requested node configuration is "
                r"not available\n$")),
    (["--gres=gpu:3", "--wrap=true"], None,
     re.compile(r"sbatch: error: Batch job submission failed: Requested node configuration is "
                r"not available\n$")),
    (["-w", "nonode", "--wrap=true"], None,
     re.compile(r"sbatch: error: Batch job submission failed: Invalid node name specified\n$")),
]


@pytest.mark.parametrize("case", REJECTED, ids=[" ".join(r[0]) for r in REJECTED])
def test_rejected_creates_no_job(cluster, case):
    args, script, expected = case[:3]
    if script is not None:
        (cluster.work / args[0]).write_text(script)
    before = job_ids(cluster)
    p = sbatch(cluster, *args, rc=case[3] if len(case) > 3 else 1)
    assert p.stdout == ""
    if isinstance(expected, str):
        assert p.stderr == expected
    else:
        assert expected.search(p.stderr), p.stderr
    assert job_ids(cluster) == before


def test_exit_error_override(cluster):
    p = sbatch(cluster, "-p", "nope", "--wrap=true", rc=7, env={"SLURM_EXIT_ERROR": "7"})
    assert "Batch job submission failed" in p.stderr


def test_version_and_help(cluster):
    assert re.match(r"^slurm \d+\.\d+\.\d+\n$", sbatch(cluster, "-V").stdout)
    assert "Usage: sbatch [OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0) [args(0)...]" in sbatch(
        cluster, "--help").stdout


def test_fewer_tasks_than_nodes(cluster):
    """As sbatch 22.05 (side by side): one node per task, with its warning
    (not under -Q); srun and salloc warn the same way, even under -Q."""
    p = sbatch(cluster, "-H", "-N", "3", "-n", "1", "--wrap=true")
    assert p.stderr == "sbatch: Warning: can't run 1 processes on 3 nodes, setting nnodes to 1\n"
    jid = submitted(p)
    assert "NumNodes=1-1 " in cluster.run("scontrol", "show", "job", str(jid)).stdout
    p = sbatch(cluster, "-Q", "-H", "-N", "2-4", "-n", "1", "--wrap=true")
    assert p.stderr == "" and p.stdout == ""
    p = cluster.run("srun", "-Q", "-N", "2", "-n", "1", "true")
    assert p.returncode == 0 and p.stderr == \
        "srun: Warning: can't run 1 processes on 2 nodes, setting nnodes to 1\n", p.stderr


# More nodes or CPUs than the partition has: real Slurm 22.05 with its default
# EnforcePartLimits=NO accepts the job and leaves it pending with reason
# PartitionConfig (checked side by side); with EnforcePartLimits=ALL it refuses.
OVER_PARTITION = [("-N", "10"), ("-n", "100")]


@pytest.mark.parametrize("args", OVER_PARTITION, ids=[" ".join(a) for a in OVER_PARTITION])
def test_over_partition_pends(cluster, args):
    jid = submitted(sbatch(cluster, *args, "--wrap=true"))
    for _ in range(50):  # the reason is set by the next scheduling pass
        p = cluster.run("squeue", "-h", "-j", jid, "-o", "%t %r")
        if p.stdout != "PD None\n":
            break
        time.sleep(0.1)
    assert p.stdout == "PD PartitionConfig\n", p.stdout + p.stderr


@pytest.mark.parametrize("args", OVER_PARTITION, ids=[" ".join(a) for a in OVER_PARTITION])
def test_over_partition_rejected_when_enforced(make_cluster, args):
    c = make_cluster(conf_extra="EnforcePartLimits=ALL")
    before = job_ids(c)
    p = sbatch(c, *args, "--wrap=true", rc=1)
    assert re.search(r"sbatch: error: Batch job submission failed: ", p.stderr), p.stderr
    assert job_ids(c) == before


def test_licenses_known_by_name(make_cluster):
    c = make_cluster(conf_extra="Licenses=foo:2,bar")
    # scontrol show licenses as 22.05.8 prints them (Loom counts no use: Used=0)
    lic = lambda *a: c.run("scontrol", *a, "show", "licenses", check=True).stdout
    assert lic() == ("LicenseName=bar\n    Total=1 Used=0 Free=1 Reserved=0 Remote=no\n"
                     "LicenseName=foo\n    Total=2 Used=0 Free=2 Reserved=0 Remote=no\n")
    assert lic("-o") == ("LicenseName=bar Total=1 Used=0 Free=1 Reserved=0 Remote=no\n"
                         "LicenseName=foo Total=2 Used=0 Free=2 Reserved=0 Remote=no\n")
    submitted(sbatch(c, "-L", "foo:2,bar", "--wrap=true"))
    for spec in ("foo:3", "foo|bar", "baz"):
        p = sbatch(c, "-L", spec, "--wrap=true", rc=1)
        assert p.stderr == ("sbatch: error: Batch job submission failed: Invalid license "
                            "specification\n")


def test_propagate_resource_limits(make_cluster):
    """The submitting shell's soft limits reach the job (PropagateResourceLimits
    defaults to ALL), --propagate picks some, PropagateResourceLimitsExcept
    leaves some out, and the job keeps the node's hard limit; the carrier
    variables do not reach the job (22.05.8 side by side: ulimit -s 4096 and
    -n 555 before sbatch give the job 4096 and 555)."""
    c = make_cluster(nodes=1, cpus=2, gpus=0, conf_extra="PropagateResourceLimitsExcept=CORE\n")
    show = "echo $(ulimit -Ss) $(ulimit -Sn) $(ulimit -Sc) $(env | grep -c ^SLURM_RLIMIT_)"

    node_core = resource.getrlimit(resource.RLIMIT_CORE)  # the daemons' (inherited)
    core_hard = node_core[1]
    shell_core = 1 if core_hard == resource.RLIM_INFINITY or core_hard >= 1024 else 0

    def submit(*args):
        line = "ulimit -S -s 4096 && ulimit -S -n 555 && ulimit -S -c %d && exec %s/sbatch %s" % (
            shell_core, BIN, " ".join(args))
        p = subprocess.run(["bash", "-c", line], env=c.env, cwd=str(c.work), capture_output=True,
                           text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        return submitted(p)
    jobs = {submit("-o", "all.out", "--wrap", "'%s'" % show): "all.out",
            submit("--propagate=STACK", "-o", "stack.out", "--wrap", "'%s'" % show): "stack.out"}
    for j in jobs:
        c.wait_job(j, "COMPLETED")
    stack, nofile, core, carriers = (c.work / "all.out").read_text().split()
    assert (stack, nofile, carriers) == ("4096", "555", "0"), (stack, nofile, core, carriers)
    want_core = ("unlimited" if node_core[0] == resource.RLIM_INFINITY
                 else str(node_core[0] // 1024))
    assert core == want_core, (core, want_core)  # CORE is excepted: the node's, not the shell's
    stack, nofile, _, _ = (c.work / "stack.out").read_text().split()
    assert stack == "4096" and nofile != "555", (stack, nofile)
    p = sbatch(c, "--propagate=STACK,bogus", "--wrap", "true", rc=1)
    assert p.stderr == ("sbatch: error: Bad rlimit name: bogus\n"
                        "sbatch: error: --propagate=STACK,bogus is not valid.\n"), p.stderr
