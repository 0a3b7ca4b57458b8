#!/usr/bin/env bash
# Builds fleetbench/sut:dev, the example device backend (examples/sut, its own Go module): a
# static binary (CGO_ENABLED=0) in an otherwise empty image, running as uid 65532, entrypoint
# /sut, listening on :8080. Needs no writable path (read-only root filesystem is fine).
# Output: bin/images/sut.tar (cached by input hash; FORCE=1 rebuilds).
# shellcheck source=hack/images/lib.sh
source "$(dirname "$0")/lib.sh"

image=fleetbench/sut:dev
src="$root/examples/sut"
start=$(date +%s)
mapfile -t inputs < <(find "$src" -maxdepth 1 -type f \( -name '*.go' ! -name '*_test.go' -o -name go.mod -o -name go.sum \) | sort)
hash=$(EXTRA_INPUTS="$image $(go env GOVERSION)" inputs_hash "${inputs[@]}" "$root/hack/images/sut.sh")
if [ -z "${FORCE:-}" ] && up_to_date sut "$hash"; then
  log "sut image up to date: bin/images/sut.tar"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$src" && CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags "-s -w" -o "$work/sut" .)
imgpack -name "$image" -out "$images/sut.tar.tmp" -file "$work/sut:/sut" -entrypoint /sut -user 65532:65532
mv "$images/sut.tar.tmp" "$images/sut.tar"
mark_built sut "$hash"
log "built $image -> bin/images/sut.tar ($(du -h "$images/sut.tar" | cut -f1)) in $(($(date +%s) - start)) s"
