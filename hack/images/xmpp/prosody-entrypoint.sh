#!/bin/sh
# Entrypoint of fleetbench/prosody:dev (prosody 0.12 from Debian bookworm), the xmppBroker
# component with engine prosody.
#
# Environment (defaults in brackets):
#   XMPP_DOMAIN [fleetbench.local]  the one VirtualHost
#   XMPP_USERS [0]                  accounts to provision at start: <prefix>0 .. <prefix>(USERS-1)
#   XMPP_USER_PREFIX [device]       lower-cased (XMPP localparts are)
#   XMPP_PASSWORD [secret]          every account's password
#   PROSODY_DATA [/var/lib/prosody] prosody's data_path, the only directory written
#   PROSODY_LOG_LEVEL [info]
#   XMPP_C2S_PORT [5222], XMPP_HTTP_PORT [5280], XMPP_INTERFACE [*]  (for local runs)
# Accounts are written straight into prosody's internal storage files by
# /usr/local/lib/fleetbench/provision-accounts.lua (seconds for 100k; prosodyctl adduser would
# take minutes), then prosody runs in the foreground: c2s on 5222, HTTP on 5280 with
# /xmpp-websocket (RFC 7395), /http-bind (BOSH) and /metrics (OpenMetrics); logs on stdout.
# No TLS; SASL PLAIN over plain connections: a test setup (see /etc/prosody/prosody.cfg.lua).
#
# Runs as the image's prosody user (numeric uid:gid in the image config, see
# hack/images/prosody.sh). Started as root it prepares PROSODY_DATA and drops to prosody. With a
# read-only root filesystem, mount a writable emptyDir on PROSODY_DATA (/var/lib/prosody).
# The open-files limit is the container's (this image never raises it): every session is a socket.
set -eu

export XMPP_DOMAIN="${XMPP_DOMAIN:-fleetbench.local}"
export XMPP_USERS="${XMPP_USERS:-0}"
export XMPP_USER_PREFIX="${XMPP_USER_PREFIX:-device}"
export XMPP_PASSWORD="${XMPP_PASSWORD:-secret}"
export PROSODY_DATA="${PROSODY_DATA:-/var/lib/prosody}"
export PROSODY_LOG_LEVEL="${PROSODY_LOG_LEVEL:-info}"
export XMPP_C2S_PORT="${XMPP_C2S_PORT:-5222}"
export XMPP_HTTP_PORT="${XMPP_HTTP_PORT:-5280}"
export XMPP_INTERFACE="${XMPP_INTERFACE:-*}"

log() { echo "fleetbench-prosody: $*" >&2; }

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PROSODY_DATA"
  chown prosody:prosody "$PROSODY_DATA"
  exec setpriv --reuid=prosody --regid=prosody --init-groups "$0" "$@"
fi
mkdir -p "$PROSODY_DATA" 2>/dev/null || true
if ! [ -d "$PROSODY_DATA" ] || ! [ -w "$PROSODY_DATA" ]; then
  log "$PROSODY_DATA is not writable by uid $(id -u): mount an emptyDir on it"
  exit 1
fi
# shellcheck disable=SC3045  # dash has ulimit -n
log "open files limit $(ulimit -n) (every session holds one)"

start=$(date +%s%N)
lua5.4 /usr/local/lib/fleetbench/provision-accounts.lua
log "provisioned $XMPP_USERS accounts in $(( ($(date +%s%N) - start) / 1000000 )) ms"

exec prosody --config /etc/prosody/prosody.cfg.lua -F
