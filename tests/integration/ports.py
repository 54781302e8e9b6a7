"""TCP ports for test daemons.

Ports come from below the kernel's ephemeral range (32768 and up on Linux),
so no outgoing connection of a running daemon can take a port between the
moment it is chosen and the moment its daemon binds it, and a port is never
handed out twice by one test process.  Two test processes running side by
side pick at random from 12,000 ports and check each one is free.
"""

import random
import socket

LOW, HIGH = 20000, 32000
_given = set()


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
        if port not in _given and _bindable(port):
            _given.add(port)
            return port
    raise RuntimeError("no free TCP port in %d-%d" % (LOW, HIGH))
