# shellcheck shell=bash
# end_processes PID... : SIGTERM, up to 10 s for them to exit, then SIGKILL. The harnesses end
# with it what a crashed earlier run of theirs left behind, before they start again.
end_processes() {
  [ $# -gt 0 ] || return 0
  kill -TERM "$@" 2>/dev/null || true
  local alive pid
  for _ in $(seq 1 50); do
    alive=0
    for pid in "$@"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && return 0
    sleep 0.2
  done
  kill -KILL "$@" 2>/dev/null || true
}
