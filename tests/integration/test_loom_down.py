"""loom down stops every daemon `loom up` started, also when the binaries were
rebuilt under them (/proc/PID/exe then reads "... (deleted)")."""
import os
import shutil
import signal
import subprocess

from conftest import BIN, need

DAEMONS = ("loom", "loomctld", "loomd", "loomstepd", "loomdbd")


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ")[-1][0] != "Z"
    except OSError:
        return False


def test_down_after_rebuild(tmp_path):
    need(*DAEMONS)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for b in DAEMONS:
        shutil.copy2(BIN / b, bindir / b)
    run = tmp_path / "run"
    up = subprocess.run([str(bindir / "loom"), "up", "--dir", str(run), "--nodes", "1",
                         "--gpus-per-node", "0", "--cpus-per-node", "2"],
                        capture_output=True, text=True, timeout=60)
    pids_file = run / "loom-up.pids"
    pids = [int(l.split()[0]) for l in pids_file.read_text().splitlines()] \
        if pids_file.exists() else []
    try:
        assert up.returncode == 0, up.stderr
        assert len(pids) >= 2 and all(alive(p) for p in pids)
        for b in DAEMONS:  # what a rebuild does: a new file in the old one's place
            data = (bindir / b).read_bytes()
            (bindir / b).unlink()
            (bindir / b).write_bytes(data)
            (bindir / b).chmod(0o755)
        down = subprocess.run([str(bindir / "loom"), "down", "--dir", str(run)],
                              capture_output=True, text=True, timeout=60)
        assert down.returncode == 0, down.stderr
        assert "stopped (%d daemons)" % len(pids) in down.stdout, down.stdout
        assert not any(alive(p) for p in pids)
    finally:
        for p in pids:
            if alive(p):
                os.kill(p, signal.SIGKILL)
