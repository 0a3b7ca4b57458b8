#!/usr/bin/env bash
# Imports image tarballs into the local cluster's containerd (namespace k8s.io, where the
# CRI plugin looks), so pods can use them with imagePullPolicy Never or IfNotPresent.
# usage: hack/images/import.sh bin/images/nginx.tar [more.tar ...]
# env:   CONTAINERD_ADDRESS  socket to import into (default: hack/cluster's containerd)
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 IMAGE.tar ..." >&2; exit 2; }
sock=${CONTAINERD_ADDRESS:-/run/fleetbench-cluster/containerd/containerd.sock}
[ -S "$sock" ] || { echo "error: no containerd socket at $sock (is the cluster up? hack/cluster/up.sh)" >&2; exit 1; }
for tar in "$@"; do
  echo ">> importing $tar" >&2
  # --no-unpack would defer unpacking to the first pod start; unpack now so start is fast.
  ctr -n k8s.io --address "$sock" images import "$tar" >/dev/null
done
