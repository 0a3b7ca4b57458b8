#!/bin/sh
# Entrypoint of fleetbench/ejabberd:dev (ejabberd 23.01 from Debian bookworm), the xmppBroker
# component with engine ejabberd. Same contract as fleetbench/prosody:dev.
#
# Environment (defaults in brackets):
#   XMPP_DOMAIN [fleetbench.local]  the one virtual host (lower-cased)
#   XMPP_USERS [0]                  accounts to provision at start: <prefix>0 .. <prefix>(USERS-1)
#   XMPP_USER_PREFIX [device]       lower-cased (XMPP localparts are)
#   XMPP_PASSWORD [secret]          every account's password
#   EJABBERD_LOG_LEVEL [info]       none|critical|error|warning|notice|info|debug
#   XMPP_C2S_PORT [5222], XMPP_HTTP_PORT [5280], XMPP_INTERFACE [*]  (for local runs; * = 0.0.0.0)
#   ERL_DIST_PORT [5210]            Erlang distribution port, bound to 127.0.0.1 only, no epmd
#   ERL_MAX_PORTS [262144]          the VM's port (socket) table; the open-files limit still caps it
# Accounts go into a fresh SQLite database (auth_method sql, plain-text passwords) with one
# INSERT ... SELECT run by the sqlite3 CLI (100k accounts in well under a second; ejabberdctl
# register would take minutes), then the Erlang VM is exec'd in the foreground the way
# `ejabberdctl foreground` starts it, minus epmd: c2s on 5222, HTTP on 5280 with
# /xmpp-websocket (RFC 7395) and /http-bind (BOSH), both with an accept backlog of 4096.
# Logs go to stdout only (ejabberd's own log files are dropped once it is up). No TLS; SASL PLAIN
# over plain connections: a test setup (see /etc/ejabberd/ejabberd.yml).
#
# Runs as the image's ejabberd user (numeric uid:gid in the image config, see
# hack/images/ejabberd.sh). Started as root it prepares the spool and drops to ejabberd. With a
# read-only root filesystem, mount a writable emptyDir on the spool /var/lib/ejabberd (it is
# also HOME: the Erlang cookie lives there). Nothing else is written.
# `ejabberdctl` works inside the container (kubectl exec): /etc/default/ejabberd points it at
# ERL_DIST_PORT, so it needs no epmd either.
set -eu

spool=/var/lib/ejabberd
domain=$(printf '%s' "${XMPP_DOMAIN:-fleetbench.local}" | tr '[:upper:]' '[:lower:]')
users="${XMPP_USERS:-0}"
prefix=$(printf '%s' "${XMPP_USER_PREFIX:-device}" | tr '[:upper:]' '[:lower:]')
password="${XMPP_PASSWORD:-secret}"
loglevel="${EJABBERD_LOG_LEVEL:-info}"
c2s_port="${XMPP_C2S_PORT:-5222}"
http_port="${XMPP_HTTP_PORT:-5280}"
interface="${XMPP_INTERFACE:-*}"
export ERL_DIST_PORT="${ERL_DIST_PORT:-5210}"
export ERL_MAX_PORTS="${ERL_MAX_PORTS:-262144}"

log() { echo "fleetbench-ejabberd: $*" >&2; }
die() { log "$*"; exit 1; }

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$spool"
  chown ejabberd:ejabberd "$spool"
  exec setpriv --reuid=ejabberd --regid=ejabberd --init-groups "$0" "$@"
fi

# Validate what goes into YAML and SQL unquoted or as a JID part.
case $users in '' | *[!0-9]*) die "XMPP_USERS must be a number, got '$users'" ;; esac
case $domain in '' | *[!a-z0-9.-]*) die "XMPP_DOMAIN must be a plain host name, got '$domain'" ;; esac
case $prefix in *[!a-z0-9._-]*) die "XMPP_USER_PREFIX may hold a-z 0-9 . _ - only, got '$prefix'" ;; esac
for p in "$c2s_port" "$http_port" "$ERL_DIST_PORT"; do
  case $p in '' | *[!0-9]*) die "ports must be numbers, got '$p'" ;; esac
done
case $loglevel in none | emergency | alert | critical | error | warning | notice | info | debug) ;;
  *) die "EJABBERD_LOG_LEVEL '$loglevel' is not an ejabberd log level" ;; esac
[ "$interface" != "*" ] || interface=0.0.0.0
case $interface in '' | *[!0-9a-fA-F.:]*) die "XMPP_INTERFACE must be an IP address or *, got '$interface'" ;; esac

# The spool must be writable: mnesia, the account database, the Erlang cookie ($HOME).
if ! touch "$spool/.fleetbench-write-test" 2>/dev/null; then
  die "$spool is not writable by uid $(id -u): mount an emptyDir on it (the only path ejabberd writes)"
fi
rm -f "$spool/.fleetbench-write-test"
export HOME="$spool"
cd "$spool"
# shellcheck disable=SC3045  # dash has ulimit -n
log "open files limit $(ulimit -n) (every session holds one)"

# ejabberd always opens <dir of EJABBERD_LOG_PATH>/ejabberd.log and error.log besides the console
# (stdout); the -eval below removes both handlers once ejabberd is up and deletes the files, so
# stdout is the only log. (Symlinks to /dev/null fail: logger's fdatasync on it logs EINVAL.)
rm -rf "$spool/log"
mkdir -p "$spool/log"

# The macros /etc/ejabberd/ejabberd.yml includes.
cat >"$spool/fleetbench-env.yml" <<EOF
define_macro:
  FB_DOMAIN: "$domain"
  FB_C2S_PORT: $c2s_port
  FB_HTTP_PORT: $http_port
  FB_IP: "$interface"
  FB_LOGLEVEL: $loglevel
EOF

# Accounts: a fresh database every start (a restarted container gets exactly XMPP_USERS accounts).
start=$(date +%s%N)
db="$spool/fleetbench-accounts.db"
rm -f "$db" "$db-journal" "$db-wal" "$db-shm"
sql_password=$(printf '%s' "$password" | sed "s/'/''/g")
SQLITE_TMPDIR="$spool" sqlite3 -bail "$db" >/dev/null <<EOF
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
.read /usr/share/ejabberd/sql/lite.sql
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 0 WHERE $users > 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < $users)
INSERT INTO users (username, password) SELECT '$prefix' || i, '$sql_password' FROM n;
COMMIT;
EOF
log "provisioned $users accounts in $((($(date +%s%N) - start) / 1000000)) ms"

# What `ejabberdctl foreground` runs, without epmd: the node listens for distribution on
# 127.0.0.1:ERL_DIST_PORT only (-erl_epmd_port, -start_epmd false), plus two -eval's.
# $warm, first: the console log handler keeps every line of a login storm (OTP's defaults drop
# lines beyond 500 a second, which could hide a warning); it blocks callers past 100 queued lines
# and drops only past 5000. Then: ejabberd 23.01 starts the SQL pool lazily on the first query, and logins racing that
# start crash with badarg in ejabberd_sql:get_worker (7 of 200 simultaneous logins did here).
# So a helper process waits (1 ms steps, at most 30 s) for ejabberd_hooks and hooks the pool start
# into ejabberd_started, which runs before the listeners accept (they wait for the application).
# $ready, once ejabberd is up: drop the log-file handlers (stdout stays), count the accounts
# through the pool (and start it if the hook somehow missed). A failing -eval stops the VM.
warm="ok = logger:update_handler_config(default, config,
    #{burst_limit_enable => false, sync_mode_qlen => 100, drop_mode_qlen => 5000, flush_qlen => 10000}),
  Dom = <<\"$domain\">>,
  Warm = fun() -> ok = ejabberd_sql_sup:start(Dom), persistent_term:put(fleetbench_sql_warm, true) end,
  spawn(fun() ->
    Wait = fun W(0) -> ok;
               W(I) -> case whereis(ejabberd_hooks) of
                         undefined -> timer:sleep(1), W(I - 1);
                         _ -> ejabberd_hooks:add(ejabberd_started, Warm, 10)
                       end
           end,
    Wait(30000)
  end)."
ready="logger:remove_handler(ejabberd_log), logger:remove_handler(error_log),
  _ = file:del_dir_r(\"$spool/log\"),
  {selected, _, [[N]]} = ejabberd_sql:sql_query(<<\"$domain\">>, [<<\"SELECT count(*) FROM users\">>]),
  logger:notice(\"fleetbench: ~s accounts in SQLite; SQL pool started before accepting: ~p; ready\",
    [N, persistent_term:get(fleetbench_sql_warm, false)])."
export EJABBERD_CONFIG_PATH=/etc/ejabberd/ejabberd.yml
export EJABBERD_LOG_PATH="$spool/log/ejabberd.log"
export ERL_LIBS=/usr/lib/x86_64-linux-gnu
export ERL_INETRC=/etc/ejabberd/inetrc
export ERL_CRASH_DUMP_BYTES=0
exec erl -sname ejabberd@localhost -noinput +P 250000 \
  -start_epmd false -erl_epmd_port "$ERL_DIST_PORT" -kernel inet_dist_use_interface '{127,0,0,1}' \
  -mnesia dir "\"$spool\"" -ejabberd log_rotate_size infinity -eval "$warm" -s ejabberd -eval "$ready"
