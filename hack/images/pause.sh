#!/usr/bin/env bash
# Builds the sandbox ("pause") image containerd starts for every pod. No registry is
# reachable, so the image is a static C program packed locally and named exactly as
# containerd's sandbox_image ($PAUSE_IMAGE in hack/versions.env).
# Output: bin/images/pause.tar (skipped when pause.c, this script and the name are unchanged).
# shellcheck source=hack/images/lib.sh
source "$(dirname "$0")/lib.sh"

here="$root/hack/images"
hash=$(EXTRA_INPUTS="$PAUSE_IMAGE" inputs_hash "$here/pause.c" "$here/pause.sh")
if up_to_date pause "$hash"; then
  log "pause image up to date: bin/images/pause.tar"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -static -Os -Wall -o "$work/pause" "$here/pause.c"
strip "$work/pause"
imgpack -name "$PAUSE_IMAGE" -out "$images/pause.tar.tmp" -file "$work/pause:/pause" -entrypoint /pause -user 65535
mv "$images/pause.tar.tmp" "$images/pause.tar"
mark_built pause "$hash"
log "built $PAUSE_IMAGE -> bin/images/pause.tar"
