#!/usr/bin/env bash
# Starts (or stops) a one-host real Slurm with accounting: MariaDB, slurmdbd,
# slurmctld and one slurmd, all with their own config, ports, state and logs
# under DIR (for side-by-side runs of sacct/sacctmgr and bench/acct.py).
# Needs root, Debian's slurmdbd + mariadb-server and munged.
#   bench/slurmdbd_local.sh start DIR [CPUS]  -> prints SLURM_CONF=...
#   bench/slurmdbd_local.sh stop DIR
set -euo pipefail
cmd=$1 dir=$(realpath -m "$2")
stop() {
  for f in "$dir"/slurmd.pid "$dir"/slurmctld.pid "$dir"/slurmdbd.pid "$dir"/run/mysql.pid; do
    [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
  done
  sleep 2
}
if [ "$cmd" = stop ]; then stop; exit 0; fi
cpus=${3:-2}
command -v slurmdbd >/dev/null && command -v mariadbd >/dev/null ||
  { echo "slurmdbd or mariadb-server not installed" >&2; exit 2; }
if ! pgrep -x munged >/dev/null; then
  [ -s /etc/munge/munge.key ] || { mungekey -c -k /etc/munge/munge.key 2>/dev/null || \
     dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null; }
  chown munge:munge /etc/munge/munge.key; chmod 600 /etc/munge/munge.key
  mkdir -p /run/munge && chown munge:munge /run/munge
  su -s /bin/sh munge -c /usr/sbin/munged || /usr/sbin/munged --force
fi
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
mkdir -p "$dir/state" "$dir/spool" "$dir/mysql" "$dir/run"
chown mysql "$dir/mysql" "$dir/run"
dbport=$(free_port) dbdport=$(free_port)
# MariaDB: a private instance on a Unix socket and a free port.
if [ ! -d "$dir/mysql/mysql" ]; then
  mariadb-install-db --user=mysql --datadir="$dir/mysql" --auth-root-authentication-method=normal \
    >"$dir/mysql-install.log" 2>&1
fi
setsid mariadbd --user=mysql --datadir="$dir/mysql" --socket="$dir/run/mysql.sock" --port="$dbport" \
  --bind-address=127.0.0.1 --pid-file="$dir/run/mysql.pid" --innodb-buffer-pool-size=1G \
  --innodb-lock-wait-timeout=900 --log-error="$dir/run/mysql.log" </dev/null >/dev/null 2>&1 &
for _ in $(seq 60); do [ -S "$dir/run/mysql.sock" ] && break; sleep 0.5; done
mariadb -S "$dir/run/mysql.sock" -u root -e \
  "CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurmpw';
   GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost'; FLUSH PRIVILEGES;"
cat > "$dir/slurmdbd.conf" <<CONF
AuthType=auth/munge
DbdHost=localhost
DbdPort=$dbdport
SlurmUser=root
LogFile=$dir/slurmdbd.log
PidFile=$dir/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$dbport
StorageUser=slurm
StoragePass=slurmpw
StorageLoc=slurm_acct_db
CONF
chmod 600 "$dir/slurmdbd.conf"
# slurmdbd finds the MariaDB socket through the client default; point it at ours.
printf '[client]\nsocket=%s\n' "$dir/run/mysql.sock" > /etc/mysql/conf.d/zz-slurm-bench.cnf
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
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$dbdport
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=1
GresTypes=gpu
AccountingStorageTRES=gres/gpu
MinJobAge=300
ReturnToService=2
NodeName=benchnode NodeHostname=$(hostname) CPUs=$cpus RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
SLURM_CONF=$dir/slurm.conf slurmdbd
export SLURM_CONF=$dir/slurm.conf
for _ in $(seq 60); do sacctmgr -n show cluster >/dev/null 2>&1 && break; sleep 0.5; done
sacctmgr -i add cluster bench >/dev/null 2>&1 || true
slurmctld -f "$dir/slurm.conf" -i
slurmd -f "$dir/slurm.conf" -N benchnode
for _ in $(seq 60); do
  sinfo -h -o %t 2>/dev/null | grep -qx idle && { echo "SLURM_CONF=$dir/slurm.conf"; exit 0; }
  sleep 0.5
done
echo "real Slurm did not come up; see $dir/*.log" >&2; exit 1
