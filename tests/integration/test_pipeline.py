"""loom pipeline (issue 6, "Beyond Slurm"; what seed 002 says Slurm lacks): named
steps with their own resources, submitted atomically as dependent jobs, shown
and cancelled as one."""
import json
import shutil

from conftest import SOURCE


def loom(cluster, *args, check=True):
    env = {"LOOM_STATE_DIR": str(cluster.root / "loomstate")}
    return cluster.run("loom", *args, env=env, check=check)


def write(cluster, doc, name="p.json"):
    path = cluster.work / name
    path.write_text(json.dumps(doc))
    return path


def status(cluster, what):
    return json.loads(loom(cluster, "pipeline", "status", what, "--json").stdout)


def wait_states(cluster, what, want, timeout=60):
    got = {}

    def ok():
        got["v"] = {s["name"]: s["state"] for s in status(cluster, what)["steps"]}
        return got["v"] == want
    cluster.wait_for(ok, "pipeline %s to be %s (last %s)" % (what, want, got.get("v")), timeout)


def test_example_pipeline(cluster, tmp_path):
    """examples/pipeline: a CPU step, a 2-node GPU step, a CPU step."""
    ex = cluster.work / "example"
    shutil.copytree(SOURCE / "examples" / "pipeline", ex)
    out = loom(cluster, "pipeline", str(ex / "pipeline.json")).stdout.splitlines()
    assert out[0].startswith("Submitted pipeline demo (id ") and out[0].endswith("3 jobs")
    wait_states(cluster, "demo", {"preprocess": "COMPLETED", "train": "COMPLETED",
                                  "evaluate": "COMPLETED"})
    st = status(cluster, "demo")
    ids = {s["name"]: s["job_id"] for s in st["steps"]}
    jobs = cluster.jobs(*ids.values())
    train, prep = jobs[ids["train"]], jobs[ids["preprocess"]]
    assert train["num_nodes"] == 2 and train["nodes"] == "node[1-2]"
    assert train["tres_per_node"] == "gres/gpu:2" and prep["cpus_per_task"] == 2
    assert train["name"] == "demo.train"
    assert prep["end_time"] <= train["start_time"] <= jobs[ids["evaluate"]]["start_time"]
    assert "accuracy" in (ex / ("demo.evaluate-%d.out" % ids["evaluate"])).read_text()
    text = loom(cluster, "pipeline", "status", str(ids["train"])).stdout.splitlines()
    assert text[0] == "PIPELINE demo (id %d): 3 steps" % ids["preprocess"]
    assert text[1].split() == ["STEP", "JOBID", "STATE", "REASON", "EXIT", "ELAPSED", "NODES",
                               "AFTER"]
    assert text[3].split()[:3] == ["train", str(ids["train"]), "COMPLETED"]
    assert text[3].split()[-2:] == ["node[1-2]", "preprocess"]


def test_failure_cascades_and_cancel(cluster):
    write(cluster, {"name": "chain", "steps": [
        {"name": "a", "command": "exit 3"},
        {"name": "b", "depends_on": "a", "command": "true"},
        {"name": "c", "depends_on": ["a", "b"], "after": "any", "command": "true"}]})
    loom(cluster, "pipeline", "p.json")
    wait_states(cluster, "chain", {"a": "FAILED", "b": "CANCELLED", "c": "COMPLETED"})
    write(cluster, {"name": "long", "defaults": {"time": "5"}, "steps": {
        "x": {"command": ["sleep", "60"]}, "y": {"depends_on": "x", "command": "true"}}})
    first = int(loom(cluster, "pipeline", "--parsable", "p.json").stdout)
    wait_states(cluster, "long", {"x": "RUNNING", "y": "PENDING"})
    assert status(cluster, str(first))["steps"][1]["reason"] == "Dependency"
    loom(cluster, "pipeline", "cancel", "long")
    wait_states(cluster, "long", {"x": "CANCELLED", "y": "CANCELLED"})


def test_checked_before_anything_is_submitted(cluster):
    bad = [
        ({"name": "n", "steps": [{"name": "a", "command": "true", "depends_on": "b"}]},
         "step 'a' depends on an unknown step 'b'"),
        ({"name": "n", "steps": [{"name": "a", "command": "true", "depends_on": "b"},
                                 {"name": "b", "command": "true", "depends_on": "a"}]},
         "the steps' dependencies form a cycle"),
        ({"name": "n", "steps": [{"name": "a", "command": "true", "flavour": "x"}]},
         "'flavour' is not an sbatch option a step may set"),
        ({"name": "n", "steps": [{"name": "a", "command": "true", "dependency": "x"}]},
         "'dependency' is not an sbatch option a step may set"),
        ({"name": "n", "steps": [{"name": "a"}]}, "step 'a' needs one of command and script"),
        ({"name": "n", "steps": [{"name": "a", "script": "nope.sh"}]}, "cannot read script"),
        ({"name": "n", "steps": [{"name": "a", "command": "true"},
                                 {"name": "a", "command": "true"}]}, "two steps are named 'a'"),
        ({"steps": [{"name": "a", "command": "true"}]}, "a \"name\""),
    ]
    for doc, msg in bad:
        write(cluster, doc)
        p = loom(cluster, "pipeline", "p.json", check=False)
        assert p.returncode == 1 and msg in p.stderr, (doc, p.stderr)
    (cluster.work / "p.json").write_text("{\"name\": ")
    p = loom(cluster, "pipeline", "p.json", check=False)
    assert p.returncode == 1 and "p.json:1:" in p.stderr
    assert cluster.jobs() == {}


def test_a_failed_submission_cancels_the_jobs_made(cluster):
    write(cluster, {"name": "half", "steps": [
        {"name": "ok", "command": "sleep 30"},
        {"name": "also", "depends_on": "ok", "command": "true"},
        {"name": "bad", "depends_on": "also", "partition": "nope", "command": "true"}]})
    p = loom(cluster, "pipeline", "p.json", check=False)
    assert p.returncode == 1
    assert "Invalid partition name specified" in p.stderr
    assert "step 'bad' was not submitted; 2 job(s) already made were cancelled" in p.stderr
    jobs = cluster.jobs()
    assert len(jobs) == 2 and {cluster.state_of(j) for j in jobs.values()} == {"CANCELLED"}
