#!/usr/bin/env bash
# Builds Kubernetes components and etcd from the Go module proxy into bin/k8s/<version>/.
# No release downloads are reachable here, so we build from source through wrapper modules
# (k8s.io/kubernetes replaces its staging modules with paths absent from its module zip).
# Re-runnable: a component already built for the pinned version is skipped; a half-written
# build directory from a crashed run is cleared first.
#
# usage: hack/build-kube.sh [component ...]   (default: kube-apiserver etcd)
# components: etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=hack/versions.env
source "$root/hack/versions.env"

out="$root/bin/k8s/$KUBE_VERSION"
work="$root/bin/.build"
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0

components=("$@")
[ ${#components[@]} -gt 0 ] || components=(kube-apiserver etcd)

mkdir -p "$out"

staging_replaces() {
  # Every staging module k8s.io/kubernetes replaces, pointed at its published tag.
  local minor="v0.${KUBE_VERSION#v1.}"
  local mod
  mod=$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  sed -n '/^replace (/,/^)/p' "$mod" | awk '/=>/ {print $1}' | while read -r m; do
    echo "replace $m => $m $minor"
  done
}

build_kube() {
  local name=$1 dir="$work/kube-$KUBE_VERSION"
  if [ ! -f "$dir/.ready" ]; then
    rm -rf "$dir" && mkdir -p "$dir"
    (
      cd "$dir"
      {
        echo "module fleetbench.dev/hack/kube"
        echo "go 1.24"
        echo "require k8s.io/kubernetes $KUBE_VERSION"
        staging_replaces
      } >go.mod
      printf 'package tools\n\nimport (\n\t_ "k8s.io/kubernetes/cmd/kube-apiserver"\n\t_ "k8s.io/kubernetes/cmd/kube-controller-manager"\n\t_ "k8s.io/kubernetes/cmd/kube-scheduler"\n\t_ "k8s.io/kubernetes/cmd/kubelet"\n\t_ "k8s.io/kubernetes/cmd/kube-proxy"\n\t_ "k8s.io/kubernetes/cmd/kubectl"\n)\n' >tools.go
      go mod tidy >/dev/null
    )
    touch "$dir/.ready"
  fi
  local pkg="k8s.io/kubernetes/cmd/$name"
  local ldflags="-s -w"
  for v in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $v.gitVersion=$KUBE_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$(echo "$KUBE_VERSION" | cut -d. -f2) -X $v.gitTreeState=clean"
  done
  (cd "$dir" && go build -trimpath -ldflags "$ldflags" -o "$out/$name.tmp" "$pkg")
  mv "$out/$name.tmp" "$out/$name"
}

build_etcd() {
  local dir="$work/etcd-$ETCD_VERSION"
  if [ ! -f "$dir/.ready" ]; then
    rm -rf "$dir" && mkdir -p "$dir"
    (
      cd "$dir"
      printf 'module fleetbench.dev/hack/etcd\n\ngo 1.24\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" >go.mod
      # etcd's own go.mod replaces its sibling modules by path; pin them to the same tag.
      for m in api/v3 client/pkg/v3 client/v3 pkg/v3; do
        echo "replace go.etcd.io/etcd/$m => go.etcd.io/etcd/$m $ETCD_VERSION" >>go.mod
      done
      printf 'package tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' >tools.go
      go mod tidy >/dev/null
    )
    touch "$dir/.ready"
  fi
  (cd "$dir" && go build -trimpath -ldflags "-s -w" -o "$out/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$out/etcd.tmp" "$out/etcd"
}

for c in "${components[@]}"; do
  if [ -x "$out/$c" ]; then
    continue
  fi
  echo ">> building $c ($([ "$c" = etcd ] && echo "$ETCD_VERSION" || echo "$KUBE_VERSION")) into ${out#"$root"/}" >&2
  case "$c" in
    etcd) build_etcd ;;
    kube-apiserver | kube-controller-manager | kube-scheduler | kubelet | kube-proxy | kubectl) build_kube "$c" ;;
    *) echo "unknown component: $c" >&2; exit 2 ;;
  esac
done
