#!/usr/bin/env bash
# Builds the fleetbench runner (k6 v2.2.0 + the fleetbench output) statically
# and packs it as an OCI tarball, without Docker or a registry.
#   bin/fleetbench-runner       the binary
#   bin/images/runner.tar       image fleetbench/runner:dev, entrypoint k6
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
image=${RUNNER_IMAGE:-fleetbench/runner:dev}

mkdir -p bin/images
(cd runner && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$root/bin/fleetbench-runner" ./cmd/fleetbench-runner)

if [[ ! -x bin/imgpack ]]; then
  (cd hack/imgpack && go build -o "$root/bin/imgpack" .)
fi

# Non-root, no shell; the usage report would only time out inside a cluster.
bin/imgpack -name "$image" -out bin/images/runner.tar \
  -file bin/fleetbench-runner:/usr/local/bin/k6 \
  -entrypoint /usr/local/bin/k6 \
  -env K6_NO_USAGE_REPORT=true \
  -user 65532
echo "runner image $image -> bin/images/runner.tar ($(du -h bin/images/runner.tar | cut -f1))"
