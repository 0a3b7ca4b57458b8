#!/usr/bin/env bash
# Builds metrics-server ($METRICS_SERVER_VERSION) from the Go module proxy and packs it as
# fleetbench/metrics-server:dev, the optional metrics.k8s.io add-on of hack/cluster/up.sh
# (FLEETBENCH_METRICS_SERVER=1). A wrapper module pins the version (`go install mod@v` trips
# over the proxy's filters). Static (CGO_ENABLED=0), runs as 65532:65532 in the pod.
# Output: bin/metrics-server-$METRICS_SERVER_VERSION and bin/images/metrics-server.tar (both
# cached: the binary per version, the image by the hash of its inputs).
# shellcheck source=hack/images/lib.sh
source "$(dirname "$0")/lib.sh"

image=fleetbench/metrics-server:dev
bin="$root/bin/metrics-server-$METRICS_SERVER_VERSION"
if [ ! -x "$bin" ]; then
  work="$root/bin/.build/metrics-server-$METRICS_SERVER_VERSION"
  log "building metrics-server $METRICS_SERVER_VERSION (about 2-4 min cold)"
  rm -rf "$work" && mkdir -p "$work"
  printf 'module fleetbench.dev/hack/metrics-server\n\ngo 1.26\n\nrequire sigs.k8s.io/metrics-server %s\n' \
    "$METRICS_SERVER_VERSION" >"$work/go.mod"
  printf 'package tools\n\nimport _ "sigs.k8s.io/metrics-server/cmd/metrics-server"\n' >"$work/tools.go"
  # Version stamp where upstream's Makefile puts it (`metrics-server --version`, /version).
  ldflags="-s -w -X k8s.io/client-go/pkg/version.gitVersion=$METRICS_SERVER_VERSION"
  (cd "$work" && GOFLAGS=-mod=mod go mod tidy >/dev/null &&
    CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o "$bin.tmp" \
      sigs.k8s.io/metrics-server/cmd/metrics-server)
  mv "$bin.tmp" "$bin"
fi

hash=$(EXTRA_INPUTS="$image" inputs_hash "$bin" "$root/hack/images/metrics-server.sh")
if up_to_date metrics-server "$hash"; then
  log "metrics-server image up to date: bin/images/metrics-server.tar"
  exit 0
fi
# No shell, no base image: the binary alone. It writes its self-signed serving certificate to
# --cert-dir (an emptyDir in hack/cluster/metrics-server.yaml), nothing else.
imgpack -name "$image" -out "$images/metrics-server.tar.tmp" -file "$bin:/metrics-server" \
  -entrypoint /metrics-server -user 65532:65532
mv "$images/metrics-server.tar.tmp" "$images/metrics-server.tar"
mark_built metrics-server "$hash"
log "built $image -> bin/images/metrics-server.tar"
