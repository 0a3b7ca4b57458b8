#!/usr/bin/env bash
# Builds the kubectl plugin for linux/amd64 into bin/kubectl-fleetbench, packs it as
# bin/krew/kubectl-fleetbench_linux_amd64.tar.gz and writes bin/krew/fleetbench.yaml from the
# template plugins/krew/fleetbench.yaml with the archive's sha256, so that
#
#   kubectl krew install --manifest=bin/krew/fleetbench.yaml --archive=bin/krew/kubectl-fleetbench_linux_amd64.tar.gz
#
# installs it with no network. PLUGIN_VERSION sets the manifest's version (default v0.1.0);
# PLUGIN_URI the archive's published address (default: a file:// URI of the archive, which krew
# does not fetch when --archive is given). The archive is reproducible: same source, same sha256.
set -euo pipefail
cd "$(dirname "$0")/.."

version=${PLUGIN_VERSION:-v0.1.0}
archive=bin/krew/kubectl-fleetbench_linux_amd64.tar.gz
manifest=bin/krew/fleetbench.yaml

mkdir -p bin/krew
GOOS=linux GOARCH=amd64 CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o bin/kubectl-fleetbench ./cmd/kubectl-fleetbench

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp bin/kubectl-fleetbench "$stage/kubectl-fleetbench"
chmod 0755 "$stage/kubectl-fleetbench"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$stage" -cf - kubectl-fleetbench | gzip -n -9 >"$archive"

sha=$(sha256sum "$archive" | cut -d' ' -f1)
uri=${PLUGIN_URI:-file://$PWD/$archive}
sed -e '/^#/d' -e "s|KREW_VERSION|$version|" -e "s|KREW_ARCHIVE_SHA256|$sha|" -e "s|KREW_ARCHIVE_URI|$uri|" \
  plugins/krew/fleetbench.yaml >"$manifest"
if grep -q 'KREW_[A-Z_]*' "$manifest"; then
  echo "krew-archive: a placeholder is left in $manifest" >&2
  exit 1
fi
echo "wrote $archive (sha256 $sha) and $manifest"
echo "install: kubectl krew install --manifest=$manifest --archive=$archive"
