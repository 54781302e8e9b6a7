"""loomctld's registration with loomdbd and what sacctmgr shows of it (issue 7).

A real loomdbd (SQLite; PostgreSQL too when LOOM_TEST_PGSQL is set) beside
loomctld, as in test_assoc_limits.py: the controller registers its cluster
when its accounting link comes up (ControlHost, ControlPort, RPC 9728 in
`sacctmgr show cluster`, as slurmctld 22.05 registers with slurmdbd); an
unknown cluster is added on registration (slurmdbd 22.05 does the same);
the address is cleared when the controller's connection ends."""
import hashlib
import hmac
import json
import signal
import socket
import struct
import time

from test_assoc_limits import acct  # noqa: F401 (the fixture: loomdbd + a cluster)


def signed_call(a, msg, nonce, conn=None):
    """One message to loomdbd over TCP (conn, else a new connection), signed
    with the cluster key (as loomctld)."""
    msg = dict(msg, v=1, id=nonce, auth={"ts": int(time.time()), "nonce": nonce,
                                         "sender": "ctld"})
    body = json.dumps(msg, separators=(",", ":")).encode()
    body += b"\0" + hmac.new((a.c.root / "slurm.key").read_bytes(), body,
                              hashlib.sha256).digest()
    s = conn or socket.create_connection(("127.0.0.1", a.dbd_port), timeout=30)
    try:
        s.sendall(struct.pack(">I", len(body)) + body)
        data = b""
        while len(data) < 4 or len(data) < 4 + struct.unpack(">I", data[:4])[0]:
            chunk = s.recv(65536)
            assert chunk, "loomdbd closed the connection"
            data += chunk
    finally:
        if not conn:
            s.close()
    return json.loads(data[4:].split(b"\0")[0])


def test_controller_registers(acct):
    a = acct()
    name = a.c.run("sacctmgr", "-n", "-P", "show", "cluster", "format=cluster").stdout.strip()
    row = a.c.run("sacctmgr", "-n", "-P", "show", "cluster",
                  "format=cluster,controlhost,controlport,rpc").stdout
    assert row == "%s||0|0\n" % name or row == "%s|||\n" % name
    a.c.start()
    want = "%s|127.0.0.1|%d|9728\n" % (name, a.c.ctld_port)
    a.c.wait_for(lambda: a.c.run("sacctmgr", "-n", "-P", "show", "cluster",
                                 "format=cluster,controlhost,controlport,rpc").stdout == want,
                 "the cluster's registration", timeout=40)
    # The default columns and widths of sacctmgr 22.05.8 (against slurmdbd 22.05.8).
    head = a.c.run("sacctmgr", "show", "cluster").stdout.splitlines()[0]
    assert head == ("   Cluster     ControlHost  ControlPort   RPC     Share GrpJobs       GrpTRES "
                    "GrpSubmit MaxJobs       MaxTRES MaxSubmit     MaxWall                  QOS "
                    "  Def QOS ")
    out = a.c.run("sacctmgr", "show", "cluster", "format=cluster,controlhost,controlport,rpc")
    assert out.stdout.splitlines()[0] == "   Cluster     ControlHost  ControlPort   RPC "
    assert out.stdout.splitlines()[2] == "%10s %15s %12d  9728 " % (name, "127.0.0.1",
                                                                    a.c.ctld_port)
    # WOLimits (any prefix of 3+ letters): the cluster's own columns only.
    out = a.c.run("sacctmgr", "show", "cluster", "wol").stdout
    assert out == ("   Cluster     ControlHost  ControlPort   RPC \n"
                   "---------- --------------- ------------ ----- \n"
                   "%10s %15s %12d  9728 \n" % (name, "127.0.0.1", a.c.ctld_port))
    out = a.c.run("sacctmgr", "show", "cluster", "WOLimits", "-P").stdout
    assert out == ("Cluster|ControlHost|ControlPort|RPC\n%s|127.0.0.1|%d|9728\n"
                   % (name, a.c.ctld_port))
    # As slurmdbd 22.05.8 when a registered slurmctld's connection ends (its
    # stop or its crash): the address is cleared, the RPC version stays.
    a.c.kill_ctld(signal.SIGTERM)
    a.c.wait_for(lambda: a.c.run("sacctmgr", "-n", "-P", "show", "cluster",
                                 "format=cluster,controlhost,controlport,rpc").stdout ==
                 "%s||0|9728\n" % name, "the address cleared", timeout=40)


def test_unknown_cluster_added_on_registration(acct):
    a = acct()
    reg = {"type": "dbd.register", "cluster": "other", "control_host": "ignored",
           "control_port": 7001, "rpc": 9728}
    conn = socket.create_connection(("127.0.0.1", a.dbd_port), timeout=30)
    rep = signed_call(a, reg, 1, conn)
    assert rep["rc"] == 0 and rep["added"] == ["other"], rep
    assert signed_call(a, dict(reg, cluster=""), 2)["rc"] != 0
    assert signed_call(a, dict(reg, cluster="x", control_port=70000), 3)["rc"] != 0
    assert signed_call(a, dict(reg, rpc="9728"), 4)["rc"] != 0
    show = ["sacctmgr", "-n", "-P", "show", "cluster", "other",
            "format=cluster,controlhost,controlport,rpc"]
    assert a.c.run(*show).stdout == "other|127.0.0.1|7001|9728\n"
    conn.close()
    a.c.wait_for(lambda: a.c.run(*show).stdout == "other||0|9728\n", "the address cleared")
    out = a.c.run("sacctmgr", "-n", "-P", "show", "assoc", "cluster=other",
                  "format=cluster,account,user").stdout
    assert out == "other|root|\nother|root|root\n"


def test_changes_take_effect_at_once(acct):
    """loomdbd wakes the controller's dbd.assoc.wait and holds sacctmgr's reply
    until the controller has read the change: no sleep, no 3 s poll."""
    a = acct()
    a.mgr("add", "account", "phys")
    a.add_user("phys")
    a.c.start()
    a.wait_loaded()
    # The controller parks its first wait once its first poll is done.
    a.c.wait_for(lambda: "waits for accounting changes" in
                 (a.c.logdir / "loomdbd.log").read_text(), "the controller's wait", timeout=40)
    for limit in (1, 2):
        gen = a.generation()
        t0 = time.monotonic()
        a.mgr("modify", "qos", "normal", "set", "MaxJobsPerUser=%d" % limit)
        took = time.monotonic() - t0
        assert a.generation() > gen, "sacctmgr returned before the controller had the change"
        assert took < 2.5, took
        ids = [int(a.sbatch("-n1", "--wrap=sleep 300").stdout) for _ in range(limit + 1)]
        a.c.wait_for(lambda: a.reason(ids[-1]) == "QOSMaxJobsPerUserLimit",
                     "QOSMaxJobsPerUserLimit")
        for j in ids[:-1]:
            a.c.wait_job(j, "RUNNING")
        assert a.c.job(ids[-1])["state"][0] == "PENDING"
        a.c.run("scancel", *[str(j) for j in ids], check=True)
        for j in ids:
            a.c.wait_for(lambda j=j: a.c.job(j)["state"][0] != "RUNNING", "job %d ended" % j)
