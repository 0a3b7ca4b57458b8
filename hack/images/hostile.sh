#!/usr/bin/env bash
# Builds fleetbench/hostile:dev, the e2e suite's stand-in for a hostile tenant's runner image
# (test/e2e/hostile: redirects and a decompression bomb where k6's REST API and result
# envelopes should be). A static binary in an otherwise empty image, uid 65532, entrypoint /hostile.
# Output: bin/images/hostile.tar (cached by input hash; FORCE=1 rebuilds).
# shellcheck source=hack/images/lib.sh
source "$(dirname "$0")/lib.sh"

image=fleetbench/hostile:dev
src="$root/test/e2e/hostile"
start=$(date +%s)
mapfile -t inputs < <(find "$src" -maxdepth 1 -type f -name '*.go' | sort)
hash=$(EXTRA_INPUTS="$image $(go env GOVERSION)" inputs_hash "${inputs[@]}" "$root/hack/images/hostile.sh")
if [ -z "${FORCE:-}" ] && up_to_date hostile "$hash"; then
  log "hostile image up to date: bin/images/hostile.tar"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags "-s -w" -o "$work/hostile" ./test/e2e/hostile)
imgpack -name "$image" -out "$images/hostile.tar.tmp" -file "$work/hostile:/hostile" -entrypoint /hostile -user 65532:65532
mv "$images/hostile.tar.tmp" "$images/hostile.tar"
mark_built hostile "$hash"
log "built $image -> bin/images/hostile.tar ($(du -h "$images/hostile.tar" | cut -f1)) in $(($(date +%s) - start)) s"
