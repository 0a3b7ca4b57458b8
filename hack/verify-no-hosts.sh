#!/usr/bin/env bash
# Fails when a tracked file names a host that packages or images are fetched from: the Go module
# proxy, Debian mirrors, npm, PyPI and container registries are the user's to configure (GOPROXY,
# apt sources or DEBIAN_MIRROR, npm's own config), never the repository's.
# hack/imgpack names docker.io only as containerd's name for an unqualified image reference,
# which an imported image must carry to be found; nothing is fetched from it.
set -euo pipefail
cd "$(dirname "$0")/.."
hosts='proxy\.golang\.org|sum\.golang\.org|deb\.debian\.org|security\.debian\.org|registry\.npmjs\.org|pypi\.org|files\.pythonhosted\.org|registry\.k8s\.io|k8s\.gcr\.io|gcr\.io|ghcr\.io|quay\.io|registry-1\.docker\.io|index\.docker\.io'
if found=$(git grep -nIE "$hosts" -- . ':!hack/verify-no-hosts.sh'); then
  echo "$found"
  echo "these name a package or image host; take it from the user's configuration instead (see README)" >&2
  exit 1
fi
