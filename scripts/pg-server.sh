#!/usr/bin/env bash
# A throwaway PostgreSQL server for the accounting tests: a cluster in DIR,
# listening only on a Unix socket in DIR on a free port, trust auth.
#   scripts/pg-server.sh start DIR   -> prints a libpq conninfo on stdout
#   scripts/pg-server.sh stop DIR
# Runs the server as the invoking user, or as `postgres` when invoked as root
# (PostgreSQL refuses to run as root).
set -euo pipefail
cmd=$1 dir=$2
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$bin" ] || { echo "pg-server: PostgreSQL is not installed" >&2; exit 2; }
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
if [ "$cmd" = stop ]; then
  [ -d "$dir/data" ] && as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  exit 0
fi
mkdir -p "$dir"
[ "$(id -u)" -eq 0 ] && chown postgres "$dir"
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
as_owner "$bin/initdb" -D "$dir/data" -A trust -U loom >/dev/null
as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
  -o "-p $port -k $dir -c listen_addresses= -c fsync=off" start >/dev/null
echo "host=$dir port=$port user=loom dbname=postgres"
