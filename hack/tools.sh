#!/usr/bin/env bash
# Builds the project's Go tools at pinned versions into bin/ (bin/<tool> links to
# bin/<tool>-<version>). Each tool gets its own wrapper module: `go install mod@v` is refused by
# the filtered module proxy for some of them, and one shared module would tie their
# dependency graphs together. Re-runnable: a tool already built at its version is skipped.
#
# usage: hack/tools.sh [controller-gen|kustomize|golangci-lint|helm ...]   (default: all)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=hack/versions.env
source "$root/hack/versions.env"
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0

# tool -> "module version package"
spec() {
  case "$1" in
    controller-gen) echo "sigs.k8s.io/controller-tools $CONTROLLER_GEN_VERSION sigs.k8s.io/controller-tools/cmd/controller-gen" ;;
    kustomize) echo "sigs.k8s.io/kustomize/kustomize/v5 $KUSTOMIZE_VERSION sigs.k8s.io/kustomize/kustomize/v5" ;;
    golangci-lint) echo "github.com/golangci/golangci-lint/v2 $GOLANGCI_LINT_VERSION github.com/golangci/golangci-lint/v2/cmd/golangci-lint" ;;
    helm) echo "helm.sh/helm/v3 $HELM_VERSION helm.sh/helm/v3/cmd/helm" ;;
    *) return 1 ;;
  esac
}

build() {
  local tool=$1 mod version pkg
  read -r mod version pkg < <(spec "$tool") || { echo "unknown tool: $tool" >&2; exit 2; }
  local target="$root/bin/$tool-$version"
  if [ ! -x "$target" ]; then
    echo ">> building $tool $version" >&2
    local dir="$root/bin/.build/$tool-$version"
    rm -rf "$dir" && mkdir -p "$dir"
    printf 'module fleetbench.dev/hack/%s\n\ngo 1.24\n\nrequire %s %s\n' "$tool" "$mod" "$version" >"$dir/go.mod"
    printf 'package tools\n\nimport _ "%s"\n' "$pkg" >"$dir/tools.go"
    (cd "$dir" && go mod tidy >/dev/null 2>&1 && go build -trimpath -o "$target.tmp" "$pkg")
    mv "$target.tmp" "$target"
  fi
  ln -sf "$(basename "$target")" "$root/bin/$tool"
}

tools=("$@")
[ ${#tools[@]} -gt 0 ] || tools=(controller-gen kustomize golangci-lint helm)
mkdir -p "$root/bin"
for t in "${tools[@]}"; do build "$t"; done
