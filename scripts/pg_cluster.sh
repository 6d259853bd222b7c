#!/usr/bin/env bash
# A throw-away PostgreSQL cluster for the tests and benchmarks: its data, log
# and Unix socket live in DIR, it listens on no TCP port, and local
# connections are trusted. Run as root, the server runs as the `postgres`
# user (PostgreSQL refuses to run as root); otherwise as the caller.
#
#   pg_cluster.sh start DIR [OPTIONS]
#                               initdb (fresh) + start; prints the connection URI.
#                               OPTIONS are more server options, e.g.
#                               "-c max_connections=10" (kept for restart)
#   pg_cluster.sh restart DIR   fast restart, keeping the data and OPTIONS
#   pg_cluster.sh stop DIR      stop and delete DIR
#   pg_cluster.sh uri DIR       print the connection URI
#
# CTest starts the cluster before the PostgreSQL tests and stops it after
# (tests/CMakeLists.txt); the tests find it through $SESSIONDB_TEST_POSTGRES.
set -euo pipefail

usage() { echo "usage: $0 start|restart|stop|uri DIR [SERVER_OPTIONS]" >&2; exit 2; }
[ $# -eq 2 ] || { [ $# -eq 3 ] && [ "$1" = start ]; } || usage
cmd=$1
dir=$2
extra=${3:-}
# The socket path must fit in 107 bytes: keep DIR short (under /tmp).
[ ${#dir} -lt 80 ] || { echo "pg_cluster: DIR '$dir' is too long for a socket path" >&2; exit 2; }

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$bin" ]; then
  echo "pg_cluster: no PostgreSQL server found under /usr/lib/postgresql; run scripts/setup.sh" >&2
  exit 1
fi

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

uri() { echo "postgresql://sessiondb@/postgres?host=$dir"; }

case $cmd in
  start)
    if [ -f "$dir/data/postmaster.pid" ]; then
      as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    [ "$(id -u)" -ne 0 ] || chown postgres "$dir"
    as_owner "$bin/initdb" -D "$dir/data" -U sessiondb -A trust -E UTF8 --no-sync \
      >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    # max_connections: the 64-writer benchmark plus parallel test processes
    # (OPTIONS come after, so they may lower it).
    echo "$extra" >"$dir/server.opts"
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-k $dir -c listen_addresses= -c max_connections=200 $extra" start >/dev/null ||
      { cat "$dir/server.log" >&2; exit 1; }
    uri
    ;;
  restart)
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -m fast \
      -o "-k $dir -c listen_addresses= -c max_connections=200 $(cat "$dir/server.opts" 2>/dev/null)" \
      restart >/dev/null
    ;;
  stop)
    if [ -f "$dir/data/postmaster.pid" ]; then
      as_owner "$bin/pg_ctl" -D "$dir/data" -w -m fast stop >/dev/null || true
    fi
    rm -rf "$dir"
    ;;
  uri) uri ;;
  *) usage ;;
esac
