#!/usr/bin/env bash
# Builds CoreDNS ($COREDNS_VERSION) from the Go module proxy and packs it as
# fleetbench/coredns:dev, the cluster DNS that hack/cluster/up.sh runs as a Deployment.
# A wrapper module pins the version (`go install mod@v` trips over the proxy's filters).
# Output: bin/coredns-$COREDNS_VERSION and bin/images/coredns.tar (both cached).
# shellcheck source=hack/images/lib.sh
source "$(dirname "$0")/lib.sh"

image=fleetbench/coredns:dev
bin="$root/bin/coredns-$COREDNS_VERSION"
if [ ! -x "$bin" ]; then
  work="$root/bin/.build/coredns-$COREDNS_VERSION"
  log "building coredns $COREDNS_VERSION (about 3 min cold)"
  rm -rf "$work" && mkdir -p "$work"
  printf 'module fleetbench.dev/hack/coredns\n\ngo 1.24\n\nrequire github.com/coredns/coredns %s\n' "$COREDNS_VERSION" >"$work/go.mod"
  printf 'package tools\n\nimport _ "github.com/coredns/coredns"\n' >"$work/tools.go"
  (cd "$work" && GOFLAGS=-mod=mod go mod tidy >/dev/null &&
    CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$bin.tmp" github.com/coredns/coredns)
  mv "$bin.tmp" "$bin"
fi

hash=$(EXTRA_INPUTS="$image" inputs_hash "$bin" "$root/hack/images/coredns.sh")
if up_to_date coredns "$hash"; then
  log "coredns image up to date: bin/images/coredns.tar"
  exit 0
fi
# Runs as root in the pod: it binds port 53 and the image has no capabilities tooling.
imgpack -name "$image" -out "$images/coredns.tar.tmp" -file "$bin:/coredns" -entrypoint /coredns
mv "$images/coredns.tar.tmp" "$images/coredns.tar"
mark_built coredns "$hash"
log "built $image -> bin/images/coredns.tar"
