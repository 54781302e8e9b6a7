"""Malformed, oversized, truncated and unauthenticated frames (frame.md §2-§4, rpc.md §6).

Each case goes to the controller's Unix socket and its TCP port. The controller
must answer with an error or drop the connection, and keep serving: a ping on a
fresh connection after every case proves it.
"""
import hashlib
import hmac
import json
import os
import socket
import struct
import time

import pytest

from conftest import recv_frame


def unix(cluster):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(str(cluster.sock))
    return s


def tcp(cluster):
    s = socket.create_connection(("127.0.0.1", cluster.ctld_port), timeout=10)
    return s


def outcome(sock):
    """'closed', or the rc of the reply the daemon sent."""
    try:
        reply = recv_frame(sock)
    except (ConnectionResetError, socket.timeout):
        return "closed"
    finally:
        sock.close()
    return "closed" if reply is None else reply.get("rc")


def body(obj):
    return json.dumps(obj, separators=(",", ":")).encode()


def signed(obj, key, ts=None, mac_key=None):
    obj = dict(obj)
    obj["auth"] = {"ts": int(ts if ts is not None else time.time()),
                   "nonce": int.from_bytes(os.urandom(7), "big"), "sender": "fuzzer"}
    text = body(obj)
    mac = hmac.new(mac_key or key, text, hashlib.sha256).digest()
    return text + b"\0" + mac


def framed(data):
    return struct.pack(">I", len(data)) + data


PING = {"v": 1, "type": "ping", "id": 7}

# (name, bytes to send, acceptable outcomes on the Unix socket)
CASES = [
    ("empty frame", struct.pack(">I", 0), {"closed"}),
    ("oversized length", struct.pack(">I", 0xFFFFFFF0) + b"{", {"closed"}),
    ("just over 16 MiB", struct.pack(">I", 16 * 1024 * 1024 + 1), {"closed"}),
    ("truncated body", struct.pack(">I", 100) + b'{"v":1', {"closed"}),
    ("truncated length", b"\x00\x00", {"closed"}),
    ("not json", framed(b"hello, world"), {"closed"}),
    ("json array", framed(b"[1,2,3]"), {"closed"}),
    ("duplicate keys", framed(b'{"v":1,"type":"ping","id":1,"id":2}'), {"closed"}),
    ("no id", framed(body({"v": 1, "type": "ping"})), {"closed"}),
    ("negative id", framed(body({"v": 1, "type": "ping", "id": -4})), {"closed"}),
    ("no type", framed(body({"v": 1, "id": 3})), {"LOOM_EPROTO"}),
    ("bad version", framed(body({"v": 99, "type": "ping", "id": 3})), {"LOOM_EMSG_VERSION"}),
    ("unknown type", framed(body({"v": 1, "type": "no.such", "id": 3})), {"LOOM_EMSG_TYPE"}),
    ("node role without MAC", framed(body({"v": 1, "type": "node.register", "id": 3,
                                            "node": "node1"})), {"LOOM_EPERM"}),
    ("wrong field types", framed(body({"v": 1, "type": "job.submit", "id": 3, "job": [1],
                                       "script": 5})), {"LOOM_EPROTO"}),
    ("signal without job", framed(body({"v": 1, "type": "job.signal", "id": 3})),
     {"LOOM_EINVAL_JOBID"}),
    ("bad MAC", None, {"closed"}),
    ("short MAC trailer", framed(body(PING) + b"\0" + b"x" * 5), {"closed"}),
    ("invalid utf-8", framed(b'{"v":1,"type":"ping","id":1,"x":"\xff\xfe"}'), {"closed"}),
    ("deep nesting", framed(b"[" * 5000 + b"]" * 5000), {"closed"}),
    ("garbage after frame", framed(body(PING))[:-1] + b"}\x00\x00", {0, "closed"}),
]


def case_bytes(cluster, name, data):
    if name == "bad MAC":
        return framed(signed(PING, cluster.key(), mac_key=b"k" * 32))
    return data


@pytest.fixture(scope="module")
def fcluster(request, tmp_path_factory):
    """One controller (no nodes needed) for every case of this module."""
    from conftest import Cluster, need
    import tempfile
    import shutil
    need("loomctld")
    root = tempfile.mkdtemp(prefix="loom-", dir="/tmp")
    c = Cluster(root, nodes=1, gpus=0)
    c.key = lambda: (c.root / "slurm.key").read_bytes()
    c.start_ctld()
    yield c
    c.stop()
    bad = c.sanitizer_reports()
    if bad:
        print(c.logs())
        pytest.fail("sanitizer report in %s" % ", ".join(bad))
    shutil.rmtree(root, ignore_errors=True)


def assert_alive(c):
    assert c.ping(), "controller stopped answering\n" + c.logs()
    # and over TCP with a signed ping
    s = tcp(c)
    s.sendall(framed(signed(PING, c.key())))
    reply = recv_frame(s)
    s.close()
    assert reply and reply["rc"] == 0


@pytest.mark.parametrize("name,data,want", CASES, ids=[c[0] for c in CASES])
def test_unix_socket(fcluster, name, data, want):
    s = unix(fcluster)
    s.sendall(case_bytes(fcluster, name, data))
    if name.startswith("truncated"):
        s.shutdown(socket.SHUT_WR)
    assert outcome(s) in want
    assert fcluster.ctld.alive()
    assert_alive(fcluster)


@pytest.mark.parametrize("name,data,want", CASES, ids=[c[0] for c in CASES])
def test_tcp_port(fcluster, name, data, want):
    """Everything unsigned is refused on TCP; a signed frame with a bad MAC is dropped."""
    s = tcp(fcluster)
    s.sendall(case_bytes(fcluster, name, data))
    if name.startswith("truncated"):
        s.shutdown(socket.SHUT_WR)
    assert outcome(s) in {"closed", "LOOM_EAUTH"}
    assert fcluster.ctld.alive()
    assert_alive(fcluster)


def test_tcp_unsigned_gets_clear_error(fcluster):
    s = tcp(fcluster)
    s.sendall(framed(body(PING)))
    reply = recv_frame(s)
    s.close()
    assert reply["rc"] == "LOOM_EAUTH"
    assert "signed with the cluster key" in reply["msg"]


def test_tcp_stale_timestamp(fcluster):
    s = tcp(fcluster)
    s.sendall(framed(signed(PING, fcluster.key(), ts=time.time() - 3600)))
    assert outcome(s) == "closed"
    assert_alive(fcluster)


def test_unix_signed_frames_are_node_role(fcluster):
    """A frame signed with the key on the Unix socket is accepted (and answered signed)."""
    s = unix(fcluster)
    s.sendall(framed(signed({"v": 1, "type": "node.heartbeat", "id": 9, "node": "node1"},
                            fcluster.key())))
    reply = recv_frame(s)
    s.close()
    assert reply["rc"] == 0


def test_many_bad_clients_at_once(fcluster):
    socks = []
    for i in range(200):
        s = unix(fcluster)
        s.sendall(struct.pack(">I", 1000) + b"{" * (i % 50))
        socks.append(s)
    assert_alive(fcluster)
    for s in socks:
        s.close()
    assert_alive(fcluster)


def test_pipelined_requests_all_answered(fcluster):
    s = unix(fcluster)
    data = b"".join(framed(body({"v": 1, "type": "ping", "id": i})) for i in range(1, 101))
    s.sendall(data)
    ids = set()
    for _ in range(100):
        ids.add(recv_frame(s)["id"])
    s.close()
    assert ids == set(range(1, 101))
