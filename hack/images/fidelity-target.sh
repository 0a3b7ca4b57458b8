#!/usr/bin/env bash
# Builds fleetbench/fidelity-target:dev, the HTTP server the fidelity corpus runs against in
# make e2e (test/fidelity/target: the routes of test/fidelity, on :8080, with its count at
# /_fidelity/hits). A static binary in an otherwise empty image, uid 65532, entrypoint /fidelity-target.
# Output: bin/images/fidelity-target.tar (cached by input hash; FORCE=1 rebuilds).
# shellcheck source=hack/images/lib.sh
source "$(dirname "$0")/lib.sh"

image=fleetbench/fidelity-target:dev
src="$root/test/fidelity"
start=$(date +%s)
mapfile -t inputs < <(find "$src" -maxdepth 2 -type f -name '*.go' ! -name '*_test.go' | sort)
hash=$(EXTRA_INPUTS="$image $(go env GOVERSION)" inputs_hash "${inputs[@]}" "$root/hack/images/fidelity-target.sh")
if [ -z "${FORCE:-}" ] && up_to_date fidelity-target "$hash"; then
  log "fidelity-target image up to date: bin/images/fidelity-target.tar"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags "-s -w" -o "$work/fidelity-target" ./test/fidelity/target)
imgpack -name "$image" -out "$images/fidelity-target.tar.tmp" -file "$work/fidelity-target:/fidelity-target" -entrypoint /fidelity-target -user 65532:65532
mv "$images/fidelity-target.tar.tmp" "$images/fidelity-target.tar"
mark_built fidelity-target "$hash"
log "built $image -> bin/images/fidelity-target.tar ($(du -h "$images/fidelity-target.tar" | cut -f1)) in $(($(date +%s) - start)) s"
