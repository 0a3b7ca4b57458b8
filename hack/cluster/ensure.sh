#!/usr/bin/env bash
# Uses an existing cluster when there is one, else boots the local one.
# Order: $KUBECONFIG, then ~/.kube/config, then a running hack/cluster/up.sh cluster
# (bin/cluster/kubeconfig); the first that answers /readyz within 5 s wins and nothing is
# started. Otherwise runs up.sh. Prints only `export KUBECONFIG=...` on stdout, so:
#   eval "$(hack/cluster/ensure.sh)"
# shellcheck source=hack/cluster/lib.sh
source "$(dirname "$0")/lib.sh"

reachable() { KUBECONFIG="$1" "$(kubectl_bin)" --request-timeout=5s get --raw /readyz >/dev/null 2>&1; }

candidates=()
[ -z "${KUBECONFIG:-}" ] || candidates+=("$KUBECONFIG")
[ ! -f "$HOME/.kube/config" ] || candidates+=("$HOME/.kube/config")
[ ! -f "$KUBECONFIG_OUT" ] || candidates+=("$KUBECONFIG_OUT")
for cfg in "${candidates[@]}"; do
  if reachable "$cfg"; then
    log "using the reachable cluster of KUBECONFIG=$cfg"
    # A running local cluster is reused as it is: say so when it has another node count than asked.
    if [ -n "${FLEETBENCH_NODES:-}" ]; then
      have=$(KUBECONFIG="$cfg" "$(kubectl_bin)" --request-timeout=5s get nodes -o name 2>/dev/null | grep -c . || true)
      [ "$have" = "$FLEETBENCH_NODES" ] ||
        log "warning: it has $have node(s), FLEETBENCH_NODES=$FLEETBENCH_NODES asks for $FLEETBENCH_NODES (hack/cluster/down.sh first to reboot it)"
    fi
    echo "export KUBECONFIG=$cfg"
    exit 0
  fi
  log "KUBECONFIG=$cfg: no reachable cluster"
done
exec "$root/hack/cluster/up.sh"
