#!/bin/bash
# Entrypoint of fleetbench/mariadb:dev (MariaDB 10.11 from Debian bookworm).
#
# First start (no initialized data dir): mariadb-install-db, then a socket-only server that
# creates database $DB_NAME and user $DB_USER@'%' (password $DB_PASSWORD, all privileges on
# $DB_NAME), runs $INIT_SQL and /docker-entrypoint-initdb.d/*.sql in $DB_NAME, and stops.
# Every start: mariadbd in the foreground on all interfaces, logging to stderr. No option files
# are read (--no-defaults: Debian's my.cnf binds to 127.0.0.1); the options are below and the
# container's arguments are appended, so `--innodb-buffer-pool-size=256M` overrides them.
#
# Runs as the image's mysql user (uid/gid in the image config; see hack/images/mariadb.sh).
# Started as root it prepares the directories and drops to mysql. Writes only to $DATA_ROOT
# (default /var/lib/fleetbench-db), $SOCKET_DIR (default /run/mysqld) and /tmp, so the root
# filesystem can be read-only with emptyDirs on those three paths. Root inside the database is
# root@localhost and mysql@localhost over the unix socket only (unix_socket authentication).
#
# Environment: DB_NAME (fleetbench), DB_USER (fleetbench), DB_PASSWORD (fleetbench), INIT_SQL,
# PORT (3306), DATA_ROOT, DATADIR ($DATA_ROOT/mysql), SOCKET_DIR, INNODB_BUFFER_POOL_SIZE (64M),
# MAX_CONNECTIONS (200).
set -euo pipefail

DATA_ROOT=${DATA_ROOT:-/var/lib/fleetbench-db}
DATADIR=${DATADIR:-$DATA_ROOT/mysql}
SOCKET_DIR=${SOCKET_DIR:-/run/mysqld}
SOCKET=$SOCKET_DIR/mysqld.sock
PORT=${PORT:-3306}
DB_NAME=${DB_NAME:-fleetbench}
DB_USER=${DB_USER:-fleetbench}
DB_PASSWORD=${DB_PASSWORD:-fleetbench}
INITDB_DIR=${INITDB_DIR:-/docker-entrypoint-initdb.d}
MARKER=.fleetbench-initialized

log() { echo "fleetbench-mariadb: $*" >&2; }

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$DATA_ROOT" "$SOCKET_DIR"
  chown mysql:mysql "$DATA_ROOT" "$SOCKET_DIR"
  exec setpriv --reuid=mysql --regid=mysql --init-groups "$0" "$@"
fi
me=$(id -un 2>/dev/null) || {
  log "uid $(id -u) has no /etc/passwd entry: run as the image's mysql user (see the image config)"
  exit 1
}

mkdir -p "$SOCKET_DIR" || { log "$SOCKET_DIR is not writable: mount an emptyDir on it (or on /run)"; exit 1; }
[ -w "$DATA_ROOT" ] || { log "$DATA_ROOT is not writable by uid $(id -u): mount an emptyDir on it"; exit 1; }
for v in DB_NAME DB_USER; do
  [[ ${!v} =~ ^[A-Za-z0-9_]{1,64}$ ]] || { log "$v=${!v}: use letters, digits and _ only"; exit 1; }
done

opts=(
  --datadir="$DATADIR" --socket="$SOCKET" --pid-file="$SOCKET_DIR/mysqld.pid" --tmpdir=/tmp
  --port="$PORT" --skip-name-resolve --skip-host-cache
  --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci
  --innodb-buffer-pool-size="${INNODB_BUFFER_POOL_SIZE:-64M}" --innodb-log-file-size=32M
  --innodb-use-native-aio=0 --max-connections="${MAX_CONNECTIONS:-200}"
  # The default 2000 x 8 instances asks for 32000+ open files and logs a warning when the
  # container's limit is lower.
  --table-open-cache=400 --table-open-cache-instances=2
  # 2 (the default) logs an "Aborted connection" warning for every TCP readiness probe.
  --log-warnings=1
)

if [ ! -e "$DATADIR/$MARKER" ]; then
  if [ -e "$DATADIR" ]; then
    log "removing the half-initialized data dir a failed first start left in $DATADIR"
  fi
  rm -rf "$DATADIR"
  mkdir -p "$DATADIR"
  log "initializing $DATADIR (database $DB_NAME, user $DB_USER)"
  # --force: no hostname lookup (there may be no resolvable hostname; we skip name resolution).
  mariadb-install-db --no-defaults --datadir="$DATADIR" --tmpdir=/tmp --skip-test-db \
    --skip-name-resolve --force --auth-root-authentication-method=socket --auth-root-socket-user="$me" \
    --innodb-log-file-size=32M >&2
  # install-db's proxy grant names this host, which --skip-name-resolve warns about on every
  # start: drop it in bootstrap mode, before any server loads the grant tables.
  echo "DELETE FROM mysql.proxies_priv WHERE Host <> 'localhost';" |
    mariadbd --no-defaults --bootstrap --datadir="$DATADIR" --tmpdir=/tmp --skip-name-resolve --log-warnings=0 \
      --innodb-log-file-size=32M >&2
  mariadbd --no-defaults "${opts[@]}" --skip-networking &
  pid=$!
  for _ in $(seq 120); do
    mariadb-admin --no-defaults --socket="$SOCKET" -u "$me" --silent ping >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || { log "mariadbd exited while initializing"; exit 1; }
    sleep 0.5
  done
  sql=(mariadb --no-defaults --socket="$SOCKET" -u "$me")
  pw=${DB_PASSWORD//\\/\\\\}
  pw=${pw//\'/\\\'}
  "${sql[@]}" <<SQL
DROP USER IF EXISTS ''@'localhost';
CREATE DATABASE IF NOT EXISTS \`$DB_NAME\`;
CREATE USER IF NOT EXISTS '$DB_USER'@'%' IDENTIFIED BY '$pw';
GRANT ALL PRIVILEGES ON \`$DB_NAME\`.* TO '$DB_USER'@'%';
SQL
  if [ -n "${INIT_SQL:-}" ]; then
    log "running INIT_SQL"
    printf '%s\n' "$INIT_SQL" | "${sql[@]}" "$DB_NAME"
  fi
  for f in "$INITDB_DIR"/*.sql; do
    [ -e "$f" ] || continue
    log "running $f"
    "${sql[@]}" "$DB_NAME" <"$f"
  done
  mariadb-admin --no-defaults --socket="$SOCKET" -u "$me" shutdown
  wait "$pid" || true
  touch "$DATADIR/$MARKER"
  log "initialized"
fi

exec mariadbd --no-defaults "${opts[@]}" "$@"
