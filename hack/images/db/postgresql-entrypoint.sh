#!/bin/bash
# Entrypoint of fleetbench/postgresql:dev (PostgreSQL 15 from Debian bookworm).
#
# First start (no initialized cluster in $PGDATA): initdb, create role $DB_USER with password
# $DB_PASSWORD and database $DB_NAME owned by it, run $INIT_SQL and then
# /docker-entrypoint-initdb.d/*.sql (as $DB_USER, in $DB_NAME), stop. Every start: run the
# server in the foreground on all interfaces, logging to stderr. Arguments are passed to
# postgres after the defaults, so `-c shared_buffers=256MB` overrides them.
#
# Runs as the image's postgres user (uid/gid in the image config; see hack/images/postgresql.sh).
# Started as root it prepares the directories and drops to postgres. Writes only to
# $DATA_ROOT (default /var/lib/fleetbench-db), $SOCKET_DIR (default /run/postgresql) and /tmp,
# so the root filesystem can be read-only with emptyDirs on those three paths.
#
# Environment: DB_NAME (fleetbench), DB_USER (fleetbench), DB_PASSWORD (fleetbench), INIT_SQL,
# PORT (5432), DATA_ROOT, PGDATA ($DATA_ROOT/pgdata), SOCKET_DIR, SHARED_BUFFERS (64MB),
# MAX_CONNECTIONS (200).
set -euo pipefail

PGBIN=/usr/lib/postgresql/15/bin
DATA_ROOT=${DATA_ROOT:-/var/lib/fleetbench-db}
PGDATA=${PGDATA:-$DATA_ROOT/pgdata}
SOCKET_DIR=${SOCKET_DIR:-/run/postgresql}
PORT=${PORT:-5432}
DB_NAME=${DB_NAME:-fleetbench}
DB_USER=${DB_USER:-fleetbench}
DB_PASSWORD=${DB_PASSWORD:-fleetbench}
INITDB_DIR=${INITDB_DIR:-/docker-entrypoint-initdb.d}
MARKER=.fleetbench-initialized
export PGDATA

log() { echo "fleetbench-postgresql: $*" >&2; }

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$DATA_ROOT" "$SOCKET_DIR"
  chown postgres:postgres "$DATA_ROOT" "$SOCKET_DIR"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if ! getent passwd "$(id -u)" >/dev/null; then
  log "uid $(id -u) has no /etc/passwd entry: run as the image's postgres user (see the image config)"
  exit 1
fi

mkdir -p "$SOCKET_DIR" || { log "$SOCKET_DIR is not writable: mount an emptyDir on it (or on /run)"; exit 1; }
[ -w "$DATA_ROOT" ] || { log "$DATA_ROOT is not writable by uid $(id -u): mount an emptyDir on it"; exit 1; }

if [ ! -e "$PGDATA/$MARKER" ]; then
  if [ -e "$PGDATA/PG_VERSION" ]; then
    log "removing the half-initialized cluster a failed first start left in $PGDATA"
  fi
  rm -rf "$PGDATA"
  mkdir -p "$PGDATA"
  chmod 700 "$PGDATA"
  log "initializing $PGDATA (database $DB_NAME, user $DB_USER)"
  "$PGBIN/initdb" -D "$PGDATA" -U postgres --encoding=UTF8 --locale=C.UTF-8 \
    --auth-local=trust --auth-host=scram-sha-256 --no-instructions >&2
  cat >"$PGDATA/pg_hba.conf" <<'HBA'
# The unix socket is inside the container only; everything over the network needs a password.
local all all                trust
host  all all 0.0.0.0/0      scram-sha-256
host  all all ::/0           scram-sha-256
HBA
  # Socket only while initializing, so clients wait for the real start.
  "$PGBIN/pg_ctl" -D "$PGDATA" -w -t 120 -o "-c listen_addresses='' -p $PORT -k $SOCKET_DIR" start >&2
  psql=("$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCKET_DIR" -p "$PORT")
  "${psql[@]}" -U postgres -d postgres -v user="$DB_USER" -v password="$DB_PASSWORD" -v db="$DB_NAME" <<'SQL'
CREATE ROLE :"user" LOGIN PASSWORD :'password';
CREATE DATABASE :"db" OWNER :"user";
SQL
  if [ -n "${INIT_SQL:-}" ]; then
    log "running INIT_SQL"
    printf '%s\n' "$INIT_SQL" | "${psql[@]}" -U "$DB_USER" -d "$DB_NAME"
  fi
  for f in "$INITDB_DIR"/*.sql; do
    [ -e "$f" ] || continue
    log "running $f"
    "${psql[@]}" -U "$DB_USER" -d "$DB_NAME" -f "$f"
  done
  "$PGBIN/pg_ctl" -D "$PGDATA" -w -t 120 -m fast stop >&2
  touch "$PGDATA/$MARKER"
  log "initialized"
fi

exec "$PGBIN/postgres" -D "$PGDATA" -p "$PORT" -k "$SOCKET_DIR" \
  -c listen_addresses='*' -c jit=off \
  -c shared_buffers="${SHARED_BUFFERS:-64MB}" -c max_connections="${MAX_CONNECTIONS:-200}" \
  -c log_destination=stderr -c logging_collector=off "$@"
