#!/usr/bin/env bash
# Builds kwok's controller binary (sigs.k8s.io/kwok/cmd/kwok) at KWOK_VERSION from hack/versions.env
# into bin/kwok-<version> (bin/kwok links to it), through its own wrapper module as hack/tools.sh
# builds tools, from the Go module proxy the user's Go is configured with (GOPROXY, go env).
# Re-runnable: skipped when that version is already built.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=hack/versions.env
source "$root/hack/versions.env"
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0

target="$root/bin/kwok-$KWOK_VERSION"
if [ ! -x "$target" ]; then
  echo ">> building kwok $KWOK_VERSION" >&2
  dir="$root/bin/.build/kwok-$KWOK_VERSION"
  rm -rf "$dir" && mkdir -p "$dir"
  printf 'module fleetbench.dev/hack/kwok\n\ngo 1.24\n\nrequire sigs.k8s.io/kwok %s\n' "$KWOK_VERSION" >"$dir/go.mod"
  printf 'package tools\n\nimport _ "sigs.k8s.io/kwok/cmd/kwok"\n' >"$dir/tools.go"
  (cd "$dir" && go mod tidy >/dev/null && nice -n 19 go build -trimpath -ldflags "-s -w" -o "$target.tmp" sigs.k8s.io/kwok/cmd/kwok)
  mv "$target.tmp" "$target"
fi
ln -sf "$(basename "$target")" "$root/bin/kwok"
