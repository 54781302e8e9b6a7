"""Seams between the accounting pieces of issue 7 on a real cluster
(loomctld, two loomd, loomdbd on SQLite): what loomctld records for a job
and its steps as sacct 22.05.8 shows it for the same job under slurmctld.

- AllocTRES / ReqTRES in sacct's order (by TRES name: billing, cpu,
  gres/..., mem, node), not scontrol's (cpu, mem, node, billing).
- A step's AllocTRES has its memory: the job's on the step's nodes when the
  step asks for none ("cpu=2,mem=500M,node=1"; slurmctld writes "mem=0"
  when it tracks no memory)."""
from test_acct_link import acct_beside  # a cluster with its loomdbd


def test_tres_in_sacct_order_and_step_memory(make_cluster):
    with acct_beside(make_cluster, cpus=4, gpus=0) as (c, a):
        jid = c.run("sbatch", "--parsable", "-n2", "--mem=500M", "--wrap", "srun -n2 true",
                    check=True).stdout.strip()
        want = {jid: ("billing=2,cpu=2,mem=500M,node=1", "billing=2,cpu=2,mem=500M,node=1"),
                jid + ".batch": ("cpu=2,mem=500M,node=1", ""),
                jid + ".0": ("cpu=2,mem=500M,node=1", "")}
        rows = {}

        def done():
            p = c.run("sacct", "-n", "-P", "-j", jid, "-o", "JobID,AllocTRES,ReqTRES,State")
            rows.clear()
            rows.update({r.split("|")[0]: tuple(r.split("|")[1:]) for r in p.stdout.split()})
            return len(rows) >= 3 and all(v[2] == "COMPLETED" for v in rows.values())
        c.wait_for(done, "job %s and its steps COMPLETED in sacct" % jid, timeout=60)
        assert {k: v[:2] for k, v in rows.items()} == want
        # NNodes of a two-node job, its batch step (one node) and its two-node step
        two = c.run("sbatch", "--parsable", "-N2", "-n2", "--wrap", "srun -N2 -n2 true",
                    check=True).stdout.strip()

        def nnodes():
            p = c.run("sacct", "-n", "-P", "-j", two, "-o", "JobID,NNodes,State")
            got = [r.split("|") for r in p.stdout.split()]
            return got if len(got) >= 3 and all(r[2] == "COMPLETED" for r in got) else None
        c.wait_for(nnodes, "job %s and its steps COMPLETED in sacct" % two, timeout=60)
        assert {r[0]: r[1] for r in nnodes()} == {two: "2", two + ".batch": "1", two + ".0": "2"}
