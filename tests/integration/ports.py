"""TCP ports for test daemons.

Ports come from below the kernel's ephemeral range (32768 and up on Linux),
so no outgoing connection of a running daemon can take a port between the
moment it is chosen and the moment its daemon binds it, and a port is never
handed out twice by one test process.  Two test processes running side by
side pick at random from 12,000 ports and check each one is free; each also
holds a lock on every port it gave out (a file in /tmp/loom-test-ports) for
as long as it lives, so that the other never takes a port whose daemon is
down for a moment (a test that kills loomdbd and starts it again on its port).
"""

import fcntl
import os
import random
import socket

LOW, HIGH = 20000, 32000
LOCKDIR = "/tmp/loom-test-ports"
MAX_HELD = 400  # lock files kept open by one process; past that, only the bind check
_given = set()
_held = []


def _reserve(port):
    """Lock the port's file for this process's life; False if another holds it."""
    if len(_held) >= MAX_HELD:
        return True
    try:
        os.makedirs(LOCKDIR, mode=0o1777, exist_ok=True)
        fd = os.open(os.path.join(LOCKDIR, str(port)), os.O_CREAT | os.O_RDWR, 0o666)
    except OSError:
        return True  # no lock directory: the bind check alone
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    _held.append(fd)
    return True


def _bindable(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port():
    """A TCP port nobody listens on now and this process has not given out."""
    for _ in range(1000):
        port = random.randrange(LOW, HIGH)
        if port not in _given and _bindable(port) and _reserve(port):
            _given.add(port)
            return port
    raise RuntimeError("no free TCP port in %d-%d" % (LOW, HIGH))
