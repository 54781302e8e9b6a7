#!/usr/bin/env bash
# Starts (or stops) a one-host real Slurm (Debian's slurm-wlm) for side-by-side
# benchmarks: its own config, ports, state and logs under DIR, so it coexists
# with any other Slurm or Loom on the machine. Needs root and munged.
#   bench/slurm_local.sh start DIR CPUS [MAX_ARRAY]   -> prints SLURM_CONF=...
#   bench/slurm_local.sh stop DIR
set -euo pipefail
cmd=$1 dir=$2
stop() {  # by the pids in DIR only: other Slurms on the host are left alone
  local pids=()
  for f in "$dir"/slurmd.pid "$dir"/slurmctld.pid; do
    [ -f "$f" ] && pids+=("$(cat "$f")")
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  kill "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 50); do
    kill -0 "${pids[@]}" 2>/dev/null || return 0
    sleep 0.2
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
}
if [ "$cmd" = stop ]; then stop; exit 0; fi
cpus=${3:-2} maxarray=${4:-1001}
command -v slurmctld >/dev/null || { echo "slurm-wlm not installed" >&2; exit 2; }
if ! pgrep -x munged >/dev/null; then
  [ -s /etc/munge/munge.key ] || { mungekey -c -k /etc/munge/munge.key 2>/dev/null || \
     dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null; }
  chown munge:munge /etc/munge/munge.key; chmod 600 /etc/munge/munge.key
  mkdir -p /run/munge && chown munge:munge /run/munge
  su -s /bin/sh munge -c /usr/sbin/munged || /usr/sbin/munged --force
fi
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
mkdir -p "$dir/state" "$dir/spool"
cat > "$dir/slurm.conf" <<CONF
ClusterName=bench
SlurmctldHost=localhost
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SlurmdParameters=config_overrides
MaxJobCount=1100000
MaxArraySize=$maxarray
MinJobAge=300
ReturnToService=2
NodeName=benchnode NodeHostname=$(hostname) CPUs=$cpus RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -f "$dir/slurm.conf" -i
slurmd -f "$dir/slurm.conf" -N benchnode
export SLURM_CONF=$dir/slurm.conf
for _ in $(seq 60); do
  sinfo -h -o %t 2>/dev/null | grep -qx idle && { echo "SLURM_CONF=$dir/slurm.conf"; exit 0; }
  sleep 0.5
done
echo "real Slurm did not come up; see $dir/*.log" >&2; exit 1
