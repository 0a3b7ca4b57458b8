#!/usr/bin/env bash
# Builds the images the end-to-end tests (or, with --demo, just the demo) need, and imports them
# into every node's containerd of the local cluster (pause and CoreDNS are up.sh's business):
#   fleetbench/manager:dev  (make manager-image)      bin/images/manager.tar
#     and the same image tagged fleetbench/manager:dev-upgrade, the "new release" the upgrade
#     test (test/e2e/upgrade_test.go) rolls to: a tag in containerd, no second tarball
#   fleetbench/runner:dev   (hack/runner-image.sh)    bin/images/runner.tar
#   fleetbench/nginx:dev    (hack/images/nginx.sh)    bin/images/nginx.tar     (the demo stops here)
#   the sample device backend and the other built-in targets (hack/images/*.sh): sut,
#   postgresql, mariadb, apache, prosody, ejabberd; fbget, the e2e tests' HTTP client; and
#   hostile, the stand-in for a hostile tenant's runner image; fidelity-target, the server the
#   fidelity corpus runs against; jaeger, the trace backend of the trace e2e (built from its Go
#   module: 5-15 min the first time, then cached per $JAEGER_VERSION)
# Cached: Go builds use the build cache, and a tarball is repacked only when the binary (or,
# for Debian images, its inputs) changed. Images are imported every time: up.sh starts with an
# empty containerd, and importing an unchanged image is a cheap no-op.
# Re-runnable. usage: hack/e2e/images.sh [--demo] [--no-import]
set -euo pipefail
shopt -s inherit_errexit
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export GOTOOLCHAIN=local
images="$root/bin/images"
mkdir -p "$images"

log() { echo ">> $(date +%T) $*" >&2; }
t0=$(date +%s)
step() { log "$1 ($(($(date +%s) - t0))s)"; }

# packed NAME FILE... : true when bin/images/NAME.tar was packed from exactly these inputs.
packed() {
  local name=$1 hash
  shift
  hash=$({ sha256sum "$@"; echo "$name"; } | sha256sum | cut -d' ' -f1)
  if [ -s "$images/$name.tar" ] && [ "$(cat "$images/$name.inputs" 2>/dev/null)" = "$hash" ]; then
    return 0
  fi
  echo "$hash" >"$images/$name.inputs.pending"
  return 1
}
mark() { mv "$images/$1.inputs.pending" "$images/$1.inputs"; }

# imgpack, built on first use or when its source changed.
if [ ! -x bin/imgpack ] || [ -n "$(find hack/imgpack -newer bin/imgpack -type f)" ]; then
  (cd hack/imgpack && go build -o "$root/bin/imgpack" .)
fi

# Manager: the same binary and packing as `make manager-image`.
CGO_ENABLED=0 go build -trimpath -o bin/manager ./cmd/manager
if packed manager bin/manager; then
  log "manager image up to date"
else
  bin/imgpack -name fleetbench/manager:dev -out "$images/manager.tar" \
    -file bin/manager:/manager -entrypoint /manager -user 65532
  mark manager
  log "packed fleetbench/manager:dev"
fi
step "manager built"

# Runner: k6 v2.2.0 with fleetbench's output (hack/runner-image.sh builds and packs it).
(cd runner && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$root/bin/fleetbench-runner.new" ./cmd/fleetbench-runner)
if [ -x bin/fleetbench-runner ] && cmp -s bin/fleetbench-runner.new bin/fleetbench-runner && packed runner hack/runner-image.sh bin/fleetbench-runner; then
  rm -f bin/fleetbench-runner.new
  log "runner image up to date"
else
  rm -f bin/fleetbench-runner.new
  hack/runner-image.sh >&2
  packed runner hack/runner-image.sh bin/fleetbench-runner || mark runner
fi
step "runner built"

hack/images/nginx.sh
step "nginx built"
built=("$images/manager.tar" "$images/runner.tar" "$images/nginx.tar")

if ! [[ " $* " == *" --demo "* ]]; then
  # The sample system under test and every built-in target engine (issue 6).
  targets=(sut postgresql mariadb apache prosody ejabberd fbget hostile fidelity-target)
  # Jaeger, the trace e2e's backend: about 10 minutes to build cold, so only where that test
  # runs (make e2e sets E2E_JAEGER; make e2e-ci leaves the test out).
  if [ -n "${E2E_JAEGER:-}" ]; then targets+=(jaeger); fi
  for image in "${targets[@]}"; do
    hack/images/$image.sh
    built+=("$images/$image.tar")
  done
  step "target images built"
fi

if ! [[ " $* " == *" --no-import "* ]]; then
  # Every node of the local cluster has its own containerd (hack/cluster/up.sh,
  # FLEETBENCH_NODES): node 1's socket is containerd/, node I's containerd-I/. Import into all
  # of them, nodes in parallel.
  socks=()
  # A second local cluster's nodes too (FLEETBENCH_CLUSTERS=2: /run/fleetbench-cluster-2/).
  for sock in /run/fleetbench-cluster/containerd/containerd.sock /run/fleetbench-cluster/containerd-[0-9]*/containerd.sock \
    /run/fleetbench-cluster-2/containerd/containerd.sock /run/fleetbench-cluster-2/containerd-[0-9]*/containerd.sock; do
    if [ -S "$sock" ]; then socks+=("$sock"); fi
  done
  [ ${#socks[@]} -gt 0 ] || { echo "error: no containerd socket under /run/fleetbench-cluster (is the cluster up? hack/cluster/up.sh)" >&2; exit 1; }
  pids=()
  for sock in "${socks[@]}"; do
    (
      CONTAINERD_ADDRESS=$sock hack/images/import.sh "${built[@]}"
      # containerd keeps the name normalised (with its default registry's host): tag what it listed.
      # The whole list first: grep -m1 ending the pipe early would fail ctr on SIGPIPE (pipefail).
      refs=$(ctr -n k8s.io --address "$sock" images ls -q)
      ref=$(grep -x '.*/fleetbench/manager:dev' <<<"$refs")
      ctr -n k8s.io --address "$sock" images tag --force "$ref" "${ref%:dev}:dev-upgrade" >/dev/null
    ) &
    pids+=($!)
  done
  failed=0
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  [ "$failed" = 0 ] || { echo "error: importing the images failed on at least one node" >&2; exit 1; }
  step "imported into ${#socks[@]} node(s)"
fi
log "images ready in $(($(date +%s) - t0))s"
