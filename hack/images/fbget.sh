#!/usr/bin/env bash
# Builds fleetbench/fbget:dev: a static Go HTTP client (hack/images/fbget) used by smoke tests
# to fetch from Services by DNS name. Output: bin/images/fbget.tar (cached).
# shellcheck source=hack/images/lib.sh
source "$(dirname "$0")/lib.sh"

image=fleetbench/fbget:dev
src="$root/hack/images/fbget"
hash=$(EXTRA_INPUTS="$image" inputs_hash "$src/main.go" "$src/go.mod" "$root/hack/images/fbget.sh")
if up_to_date fbget "$hash"; then
  log "fbget image up to date: bin/images/fbget.tar"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$src" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$work/fbget" .)
imgpack -name "$image" -out "$images/fbget.tar.tmp" -file "$work/fbget:/fbget" -entrypoint /fbget -user 65532
mv "$images/fbget.tar.tmp" "$images/fbget.tar"
mark_built fbget "$hash"
log "built $image -> bin/images/fbget.tar"
