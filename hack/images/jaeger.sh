#!/usr/bin/env bash
# Builds Jaeger ($JAEGER_VERSION: its cmd/jaeger is Jaeger v2, an OpenTelemetry Collector
# distribution) from the Go module proxy and packs it as fleetbench/jaeger:dev, the trace backend
# of the trace e2e (test/e2e/traces_test.go). A wrapper module pins the version (`go install
# mod@v` trips over the proxy's filters). Static (CGO_ENABLED=0), runs as 65532:65532 in the pod,
# with hack/images/jaeger.yaml as /etc/jaeger/config.yaml: OTLP in on 4317 (gRPC) and 4318
# (HTTP), spans in memory, the query API on 16686 (the module ships no UI assets: a placeholder
# page), health on GET 13133/status. About 10 min cold at nice 19 on 2 busy cores; 85 MB binary,
# 29 MB image.
# Output: bin/jaeger-$JAEGER_VERSION and bin/images/jaeger.tar (both cached: the binary per
# version, the image by the hash of its inputs).
# shellcheck source=hack/images/lib.sh
source "$(dirname "$0")/lib.sh"

image=fleetbench/jaeger:dev
bin="$root/bin/jaeger-$JAEGER_VERSION"
config="$root/hack/images/jaeger.yaml"
if [ ! -x "$bin" ]; then
  work="$root/bin/.build/jaeger-$JAEGER_VERSION"
  log "building jaeger $JAEGER_VERSION (about 5-15 min cold)"
  rm -rf "$work" "$bin.tmp" && mkdir -p "$work"
  printf 'module fleetbench.dev/hack/jaeger\n\ngo 1.26\n\nrequire github.com/jaegertracing/jaeger %s\n' \
    "$JAEGER_VERSION" >"$work/go.mod"
  printf 'package tools\n\nimport _ "github.com/jaegertracing/jaeger/cmd/jaeger"\n' >"$work/tools.go"
  # Version stamp where upstream's Makefile puts it (`jaeger version`).
  ldflags="-s -w -X github.com/jaegertracing/jaeger/internal/version.latestVersion=$JAEGER_VERSION"
  (cd "$work" && GOFLAGS=-mod=mod go mod tidy >/dev/null &&
    CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o "$bin.tmp" \
      github.com/jaegertracing/jaeger/cmd/jaeger)
  mv "$bin.tmp" "$bin"
fi

hash=$(EXTRA_INPUTS="$image" inputs_hash "$bin" "$config" "$root/hack/images/jaeger.sh")
if up_to_date jaeger "$hash"; then
  log "jaeger image up to date: bin/images/jaeger.tar"
  exit 0
fi
# No shell, no base image: the binary and its config. Storage is memory: nothing is written.
imgpack -name "$image" -out "$images/jaeger.tar.tmp" -file "$bin:/jaeger" \
  -file "$config:/etc/jaeger/config.yaml" \
  -entrypoint /jaeger -cmd --config=/etc/jaeger/config.yaml -user 65532:65532
mv "$images/jaeger.tar.tmp" "$images/jaeger.tar"
mark_built jaeger "$hash"
log "built $image -> bin/images/jaeger.tar ($(du -h "$images/jaeger.tar" | cut -f1))"
