#!/usr/bin/env bash
# Builds the project's Go tools into bin/ (bin/<tool> links to bin/<tool>-<version>). Each tool
# is pinned by its own module under hack/tools/<tool>: a go.mod with Go's `tool` directive and a
# go.sum, so the build is checked against recorded hashes, and one tool's dependency graph never
# ties another's or the project's. `go tool` works there too (cd hack/tools/helm && go tool helm).
# Update one: cd hack/tools/<tool> && go get -tool <package>@<version> && go mod tidy.
# Re-runnable: a tool already built at its version is skipped.
#
# usage: hack/tools.sh [controller-gen|kustomize|golangci-lint|helm ...]   (default: all)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly

build() {
  local tool=$1 dir="$root/hack/tools/$1" pkg version
  [ -f "$dir/go.mod" ] || { echo "unknown tool: $tool (no hack/tools/$tool/go.mod)" >&2; exit 2; }
  pkg=$(awk '$1 == "tool" { print $2; exit }' "$dir/go.mod")
  version=$(cd "$dir" && go list -f '{{.Module.Version}}' "$pkg")
  local target="$root/bin/$tool-$version"
  if [ ! -x "$target" ]; then
    echo ">> building $tool $version" >&2
    (cd "$dir" && go build -trimpath -o "$target.tmp" "$pkg")
    mv "$target.tmp" "$target"
  fi
  ln -sf "$(basename "$target")" "$root/bin/$tool"
}

tools=("$@")
[ ${#tools[@]} -gt 0 ] || tools=(controller-gen kustomize golangci-lint helm)
mkdir -p "$root/bin"
for t in "${tools[@]}"; do build "$t"; done
