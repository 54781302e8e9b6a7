"""The accounting data behind dbd_expected/sreport.json and seff.json: one
cluster "bench" (2 nodes × 4 CPUs, 2 GPUs) over the day DAY (UTC), with a node
down for six hours and a handful of jobs of three users in two accounts.

The same data was written into real slurmdbd 22.05.8's MariaDB tables
(dbd_sreport_capture.py) and rolled up by slurmdbd to capture sreport's
outputs; test_dbd_sreport.py turns it into Loom records."""
import calendar

DAY = calendar.timegm((2026, 11, 18, 0, 0, 0))
H = 3600
CAPACITY = "cpu=8,mem=16000M,node=2,billing=8,gres/gpu=2"
DOWN = "cpu=4,mem=8000M,node=1,billing=4,gres/gpu=1"
# (time, tres, down_tres): the cluster's capacity records.
CAPACITY_RECORDS = [
    (DAY - 2 * 86400, CAPACITY, ""),
    (DAY + 12 * H, CAPACITY, DOWN),
    (DAY + 18 * H, CAPACITY, ""),
]
USERS = {"root": (0, 0), "daemon": (1, 1), "bin": (2, 2)}
# id, user, account, cpus, mem (MiB), nodes, gpus, submit, eligible, start, end
JOBS = [
    (101, "root", "phys", 4, 4000, 1, 0, DAY + 1000, DAY + 1800, DAY + 1 * H, DAY + 3 * H),
    (102, "daemon", "chem", 2, 2000, 1, 0, DAY - 2 * H, DAY - 2 * H, DAY - 1 * H, DAY + 2 * H),
    (103, "bin", "phys", 1, 1000, 1, 0, DAY + 20 * H, DAY + 20 * H, DAY + 22 * H, DAY + 28 * H),
    (104, "bin", "chem", 8, 16000, 2, 2, DAY + 5 * H, DAY + 5 * H, DAY + 6 * H, DAY + 9 * H),
    (105, "root", "phys", 2, 2000, 1, 1, DAY - 30 * H, DAY - 30 * H, DAY - 29 * H, DAY - 25 * H),
    (106, "daemon", "chem", 3, 3000, 1, 0, DAY + 9 * H, DAY + 9 * H, DAY + 10 * H, DAY + 11 * H + 1800),
    (107, "root", "phys", 1, 1000, 1, 0, DAY + 13 * H, DAY + 13 * H, DAY + 13 * H, DAY + 13 * H + 2400),
    # never started: still pending, and cancelled while pending (their wait is Planned)
    (108, "daemon", "chem", 2, 2000, 1, 0, DAY + 14 * H, DAY + 14 * H, 0, 0),
    (109, "bin", "chem", 4, 4000, 1, 0, DAY + 15 * H, DAY + 15 * H, 0, DAY + 16 * H),
    (110, "daemon", "sub", 1, 1000, 1, 0, DAY + 19 * H, DAY + 19 * H, DAY + 19 * H, DAY + 21 * H),
]
STATES = {108: ("PENDING", 0), 109: ("CANCELLED", 4)}  # else COMPLETED (3)


def tres_alloc(cpus, mem, nodes, gpus):
    s = "cpu=%d,mem=%dM,node=%d,billing=%d" % (cpus, mem, nodes, cpus)
    return s + (",gres/gpu=%d" % gpus if gpus else "")
