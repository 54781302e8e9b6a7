"""Captures dbd_expected/sreport.json from real sreport 22.05.8: run with
SLURM_CONF pointing at a slurmdbd whose MariaDB holds sreport_data.py's
records, rolled up (TZ=UTC). Each entry: cmd, stdout, stderr, rc."""
import json
import os
import shlex
import subprocess
import sys

W = "start=2026-11-18 end=2026-11-19"
CMDS = [
    "sreport cluster utilization " + W,
    "sreport cluster utilization -t percent " + W,
    "sreport cluster utilization -t hourper " + W,
    "sreport cluster utilization -t minper " + W,
    "sreport cluster utilization -t secper " + W,
    "sreport cluster utilization -t seconds " + W,
    "sreport cluster utilization -t hours " + W,
    "sreport -t Min cluster utilization " + W,
    "sreport cluster utilization -T cpu,mem,gres/gpu " + W,
    "sreport cluster utilization -T gres/gpu -t percent " + W,
    "sreport cluster utilization -T ALL " + W,
    "sreport -P cluster utilization " + W,
    "sreport -p cluster utilization " + W,
    "sreport -n cluster utilization " + W,
    "sreport -n -P cluster utilization " + W,
    "sreport cluster utilization format=Cluster,TresCount,Allocated,OverCommitted,TresName,Reported,Down,Idle,Planned,PlannedDown " + W,
    "sreport cluster utilization format=Cluster%20,Allocated%-15,Idle%4 " + W,
    "sreport cluster utilization cluster=bench " + W,
    "sreport cluster utilization cluster=other " + W,
    "sreport cluster utilization start=2026-11-17 end=2026-11-20",
    "sreport cluster utilization start=2026-11-18T01:00 end=2026-11-18T05:00",
    "sreport cluster utilization start=2026-11-18T00:29:59 end=2026-11-18T23:30:00",
    "sreport cluster utilization start=11/18/26 end=11/19/26",
    "sreport cluster ut " + W,
    "sreport user top " + W,
    "sreport user topusage TopCount=2 " + W,
    "sreport user top users=bin " + W,
    "sreport user top accounts=chem " + W,
    "sreport user top -t percent " + W,
    "sreport user top -t hourper " + W,
    "sreport user top group " + W,
    "sreport user top -T cpu,mem " + W,
    "sreport -P user top " + W,
    "sreport user top format=Login,Used,Account " + W,
    "sreport user top -t hours " + W,
    "sreport cluster AccountUtilizationByUser -t hours " + W,
    "sreport cluster utilization -t hours start=2026-11-18T13:00 end=2026-11-18T14:00",
    "sreport cluster utilization -t hourper start=2026-11-18T13:00 end=2026-11-18T14:00",
    "sreport user top start=2026-11-17 end=2026-11-20",
    "sreport cluster AccountUtilizationByUser " + W,
    "sreport cluster AccountUtilizationByUser tree " + W,
    "sreport cluster AccountUtilizationByUser accounts=phys " + W,
    "sreport cluster AccountUtilizationByUser users=bin " + W,
    "sreport cluster AccountUtilizationByUser -t percent " + W,
    "sreport -P cluster AccountUtilizationByUser " + W,
    "sreport cluster UserUtilizationByAccount " + W,
    "sreport cluster AccountUtilizationByUser -T cpu,mem " + W,
    "sreport cluster AccountUtilizationByUser tree accounts=chem " + W,
    "sreport cluster AccountUtilizationByUser -t minper " + W,
    "sreport user top -T mem " + W,
    "sreport user top -T gres/gpu " + W,
    "sreport user top TopCount=1 users=root,daemon " + W,
    "sreport user top start=2026-11-18 end=2026-11-18T12:00",
    "sreport -M bench cluster utilization " + W,
    "sreport -a cluster utilization " + W,
    "sreport cluster utilization all_clusters " + W,
    "sreport cluster Utilization Format=cluster,IDLE " + W,
    "sreport cluster utilization -T mem -t minper " + W,
    "sreport cluster utilization -T cpu " + W,
    "sreport -T gres/gpu cluster utilization -t hours " + W,
    "sreport cluster UserUtilizationByAccount users=bin " + W,
    "sreport cluster UserUtilizationByAccount accounts=phys -t percent " + W,
    "sreport user top users=nobody " + W,
    "sreport -n user top " + W,
    "sreport -p user top group -T cpu,mem " + W,
    "sreport user top -T mem -t percent " + W,
    "sreport cluster AccountUtilizationByUser accounts=phys,chem -P " + W,
    "sreport cluster AccountUtilizationByUser format=Accounts%-30,Login,Used " + W,
    "sreport user top start=2026-11-19 end=2026-11-20",
    "sreport cluster utilization -t percent start=2026-11-19 end=2026-11-20",
    "sreport cluster utilization foo=bar " + W,
    "sreport cluster bogus",
    "sreport bogus",
    "sreport user bogus",
    "sreport -t bogus cluster utilization " + W,
    "sreport cluster utilization format=bogus " + W,
    "sreport cluster utilization start=bogus end=2026-11-19",
    "sreport cluster utilization -T bogus " + W,
    "sreport --bogus",
    "sreport -V",
]


def main():
    out = []
    env = dict(os.environ, TZ="UTC")
    for cmd in CMDS:
        p = subprocess.run(shlex.split(cmd), capture_output=True, text=True, env=env,
                           stdin=subprocess.DEVNULL, timeout=60)
        out.append({"cmd": cmd, "stdout": p.stdout, "stderr": p.stderr, "rc": p.returncode})
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
