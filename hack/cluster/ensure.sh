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
    echo "export KUBECONFIG=$cfg"
    exit 0
  fi
  log "KUBECONFIG=$cfg: no reachable cluster"
done
exec "$root/hack/cluster/up.sh"
