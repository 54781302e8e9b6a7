"""`loom config check` on the seed configuration and on broken variants.

Runs the built `loom` binary (LOOM_BUILD_DIR/bin/loom, or src/cli/loom in
older build layouts) on examples/lambda and on the bad files of
tests/unit/conf, and checks exit codes, the summary, and that each error
names the file and line (CLI_SPEC §13, §13.1).
"""
import os
import shutil
import subprocess

import pytest

SRC = os.environ.get(
    "LOOM_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
)
BUILD = os.environ.get("LOOM_BUILD_DIR", os.path.join(SRC, "build", "dev"))
SEED_CONF = os.path.join(SRC, "examples", "lambda", "slurm.conf")
SEED_GRES = os.path.join(SRC, "examples", "lambda", "gres.conf")
BAD = os.path.join(SRC, "tests", "unit", "conf")


def loom_bin():
    for rel in ("bin/loom", "src/cli/loom"):
        path = os.path.join(BUILD, rel)
        if os.access(path, os.X_OK):
            return path
    pytest.skip("loom binary not built in %s" % BUILD)


def run(*args, env=None):
    full_env = dict(os.environ)
    full_env.pop("SLURM_CONF", None)
    full_env.update(env or {})
    return subprocess.run(
        [loom_bin(), *args], capture_output=True, text=True, timeout=60, env=full_env
    )


def test_seed_config_is_valid():
    r = run("config", "check", "-f", SEED_CONF)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    out = r.stdout
    assert "gres.conf: %s (AutoDetect=nvml" % SEED_GRES in out
    assert "cluster: lambda-cluster" in out
    assert "nodes: 32 (2048 CPUs, 16480000M memory" in out
    assert (
        "lambda-gpu-[001-016]  cpus=64 S:C:T=2:32:1 mem=515000M "
        "gres=gpu:h100:8 (/dev/nvidia[0-7] cores=0-31) features=h100" in out
    )
    assert (
        "lambda-gpu-[017-032]  cpus=64 S:C:T=2:32:1 mem=515000M "
        "gres=gpu:h200:8 (/dev/nvidia[0-7] cores=32-63) features=h200" in out
    )
    assert "partitions: 3" in out
    lines = out.splitlines()
    gpu = next(l for l in lines if l.startswith("  gpu*"))
    assert "nodes=lambda-gpu-[001-032] (32)" in gpu and "MaxTime=7-00:00:00" in gpu
    assert "Default=YES" in gpu and "State=UP" in gpu
    inter = next(l for l in lines if l.startswith("  interactive"))
    assert "nodes=lambda-gpu-[001-004] (4)" in inter and "MaxTime=02:00:00" in inter
    batch = next(l for l in lines if l.startswith("  batch"))
    assert "nodes=lambda-gpu-[005-032] (28)" in batch
    assert lines[-1] == "configuration OK"


def test_slurm_conf_env_and_quiet():
    r = run("config", "check", "-q", env={"SLURM_CONF": SEED_CONF})
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""


def test_gres_conf_beside_or_explicit(tmp_path):
    # No gres.conf beside slurm.conf: counts come from slurm.conf alone, but a
    # GPU then has no device file, which is fine without gres.conf.
    shutil.copy(SEED_CONF, tmp_path / "slurm.conf")
    r = run("config", "check", "-f", str(tmp_path / "slurm.conf"))
    assert r.returncode == 0, r.stderr
    assert "gres.conf: none" in r.stdout
    assert "gres=gpu:h100:8 features=h100" in r.stdout
    # An explicit gres.conf with fake tty GPUs.
    r = run("config", "check", "-f", str(tmp_path / "slurm.conf"), "-g",
            os.path.join(BAD, "gres_tty.conf"))
    assert r.returncode == 0, r.stderr
    assert "gres=gpu:h100:8 (/dev/tty[0-7] cores=0-31)" in r.stdout


def test_cgroup_conf_beside(tmp_path):
    """cgroup.conf beside slurm.conf is checked too; its errors name file:line."""
    shutil.copy(SEED_CONF, tmp_path / "slurm.conf")
    (tmp_path / "cgroup.conf").write_text("CgroupAutomount=yes\nConstrainCores=yes\n"
                                          "ConstrainRAMSpace=yes\nConstrainDevices=yes\n")
    r = run("config", "check", "-q", "-f", str(tmp_path / "slurm.conf"))
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    (tmp_path / "cgroup.conf").write_text("ConstrainCores=yes\nAllowedRAMSpace=lots\n")
    r = run("config", "check", "-q", "-f", str(tmp_path / "slurm.conf"))
    assert r.returncode == 1
    assert r.stderr == "loom: error: %s:2: AllowedRAMSpace=lots: expected a percentage\n" % (
        tmp_path / "cgroup.conf")


def test_include_ok():
    r = run("config", "check", "-f", os.path.join(BAD, "include_main.conf"))
    assert r.returncode == 0, r.stderr
    assert "(+1 included)" in r.stdout
    assert "nodes: 4 (16 CPUs, 16G memory)" in r.stdout


BAD_SLURM = [
    ("typo_key.conf", "typo_key.conf:3: unknown key 'SlurmctlHost', did you mean SlurmctldHost"),
    ("bad_time.conf", "bad_time.conf:5: invalid MaxTime value '7-00:00:0x' for partition gpu"),
    ("unknown_node.conf", "unknown_node.conf:5: partition q: unknown node 'n5'"),
    ("missing_cluster.conf", "missing_cluster.conf: ClusterName is required"),
    ("missing_ctld.conf", "missing_ctld.conf: SlurmctldHost is required"),
    ("include_loop.conf", "include_loop_b.conf:2: Include loop"),
    ("gres_types.conf", "gres_types.conf:3: GRES 'gpu' of node n[1-4] is not listed in GresTypes"),
    ("dup_node.conf", "dup_node.conf:4: duplicate node name 'n4'"),
    ("two_defaults.conf", "two_defaults.conf:5: partition q is Default=YES but so is p"),
    ("bad_node_key.conf", "bad_node_key.conf:3: unknown key 'Featurez' on NodeName line"),
    ("bad_memory.conf", "bad_memory.conf:4: invalid RealMemory value 'lots' for node n[1-4]"),
    ("bad_value.conf", "bad_value.conf:4: invalid SelectTypeParameters value 'CR_Core_Memmory'"),
]


@pytest.mark.parametrize("name,msg", BAD_SLURM)
def test_bad_slurm_conf(name, msg):
    r = run("config", "check", "-f", os.path.join(BAD, name))
    assert r.returncode == 1
    assert r.stdout == ""
    assert r.stderr.startswith("loom: error: ")
    assert msg in r.stderr


BAD_GRES = [
    ("gres_count_mismatch.conf",
     "gres_count_mismatch.conf:2: node lambda-gpu-001: gres.conf gives 4 gpu:h100 but "
     "slurm.conf Gres= says 8"),
    ("gres_bad_key.conf", "gres_bad_key.conf:1: unknown key 'Fiel', did you mean File"),
    ("gres_bad_count.conf", "gres_bad_count.conf:1: Count=8 does not match the 4 file(s)"),
    ("gres_bad_cores.conf", "gres_bad_cores.conf:1: Cores=0-99 is outside node lambda-gpu-001"),
    ("gres_bad_autodetect.conf", "gres_bad_autodetect.conf:1: invalid AutoDetect value 'cuda'"),
    ("gres_not_in_types.conf", "gres_not_in_types.conf:3: GRES 'mps' is not listed in GresTypes"),
]


@pytest.mark.parametrize("name,msg", BAD_GRES)
def test_bad_gres_conf(name, msg):
    r = run("config", "check", "-f", SEED_CONF, "-g", os.path.join(BAD, name))
    assert r.returncode == 1
    assert r.stderr.startswith("loom: error: ")
    assert msg in r.stderr


def test_warnings_go_to_stderr(tmp_path):
    conf = tmp_path / "slurm.conf"
    conf.write_text(
        "ClusterName=Mixed\nSlurmctldHost=h\nKillWait=10\nKillWait=20\n"
        "NodeName=n1 CPUs=10 Sockets=2 CoresPerSocket=4\nPartitionName=p Nodes=n1\n"
    )
    r = run("config", "check", "-f", str(conf))
    assert r.returncode == 0, r.stderr
    assert "slurm.conf:1: ClusterName converted to lower case: 'mixed'" in r.stderr
    assert "slurm.conf:4: KillWait specified more than once" in r.stderr
    assert "slurm.conf:5: NodeName=n1: CPUs=10 matches neither" in r.stderr
    assert "no partition has Default=YES" in r.stderr
    assert "  n1  cpus=8 S:C:T=2:4:1" in r.stdout


def test_usage_and_version():
    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith("loom ")
    assert run("config").returncode == 1
    assert run("config", "check", "--bogus").returncode == 1
    assert run("nosuchcommand").returncode == 1
    r = run("config", "check", "-f", "/nonexistent/slurm.conf")
    assert r.returncode == 1
    assert "loom: error: cannot open /nonexistent/slurm.conf" in r.stderr
