"""sacctmgr show|list account|user withassoc (issue 7), byte for byte against
sacctmgr 22.05.8 on slurmdbd 22.05.8 + MariaDB (bench/slurmdbd_local.sh; the
same commands on the same tree, cluster renamed: dbd_expected/withassoc/)."""
import pathlib

import pytest

from test_assoc_limits import BACKENDS, AcctCluster

EXPECTED = pathlib.Path(__file__).parent / "dbd_expected" / "withassoc"


@pytest.fixture(params=BACKENDS)
def acct(request, make_cluster):
    a = AcctCluster(make_cluster, request.param)
    yield a
    a.close()


CASES = [
    ("acct_default.txt", ["show", "account", "withassoc"]),
    ("user_default.txt", ["show", "user", "withassoc"]),
    ("acct_P.txt", ["show", "account", "withassoc", "-P"]),
    ("acct_pn.txt", ["show", "account", "withassoc", "-p", "-n", "physics"]),
    ("user_P.txt", ["list", "user", "withassoc", "alice", "-P"]),
    ("user_fmt.txt", ["show", "user", "withassoc",
                      "format=user,account,grpcpus,maxcpus,maxcpumins%5"]),
]


def test_withassoc_like_slurm(acct):
    acct.mgr("add", "account", "physics", "Description=Physics dept", "Organization=sci")
    acct.mgr("add", "user", "alice", "account=physics")
    acct.mgr("modify", "account", "physics", "set", "grptres=cpu=8,node=2,mem=1000",
             "maxtres=cpu=4", "grptresmins=cpu=100", "maxtresmins=cpu=50")
    for name, args in CASES:
        p = acct.c.run("sacctmgr", *args)
        assert p.returncode == 0, p.stderr
        assert p.stdout == (EXPECTED / name).read_text(), (name, p.stdout)


def test_withassoc_filters_and_errors(acct):
    acct.mgr("add", "account", "physics")
    acct.mgr("add", "user", "alice", "account=physics")
    out = acct.c.run("sacctmgr", "-n", "-P", "show", "account", "withassoc", "where",
                     "user=alice", "format=account,user,parentname").stdout
    assert out == "physics|alice|\n"
    out = acct.c.run("sacctmgr", "-n", "-P", "show", "account", "physics", "withassoc",
                     "format=account,user,parentname,cluster").stdout
    assert out == "physics||root|loomtest\nphysics|alice||loomtest\n"
    p = acct.c.run("sacctmgr", "show", "account", "withassoc", "format=account,nosuch")
    assert p.returncode != 0 and "nosuch" in p.stderr
