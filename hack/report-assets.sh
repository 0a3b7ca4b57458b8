#!/usr/bin/env bash
# Fetches the charting library the HTML report inlines (uPlot, MIT) with the machine's npm,
# honouring the user's npm config and registry, checks the tarball against the integrity pinned
# below, and copies the browser build and its licence into pkg/present/htmlreport/assets/ (committed, so
# `go install` works from a fresh clone). Re-runnable: the temporary directory is cleared first.
#
# To move to another version: set UPLOT_VERSION, put `npm view uplot@<version> dist.integrity`
# into UPLOT_INTEGRITY, run `make report-assets` and commit pkg/present/htmlreport/assets/.
set -euo pipefail

UPLOT_VERSION=1.6.32
UPLOT_INTEGRITY=sha512-KIMVnG68zvu5XXUbC4LQEPnhwOxBuLyW1AHtpm6IKTXImkbLgkMy+jabjLgSLMasNuGGzQm/ep3tOkyTxpiQIw==

root=$(cd "$(dirname "$0")/.." && pwd)
tmp="$root/bin/tmp/report-assets"
dest="$root/pkg/present/htmlreport/assets"

command -v npm >/dev/null || { echo "npm is needed to fetch uplot@$UPLOT_VERSION" >&2; exit 1; }
rm -rf "$tmp"
mkdir -p "$tmp" "$dest"

(cd "$tmp" && npm pack --silent "uplot@$UPLOT_VERSION" >/dev/null)
tarball="$tmp/uplot-$UPLOT_VERSION.tgz"
[ -f "$tarball" ] || { echo "npm pack did not write $tarball" >&2; exit 1; }

# An npm integrity string is "sha512-" and the base64 of the tarball's SHA-512.
got="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
if [ "$got" != "$UPLOT_INTEGRITY" ]; then
  echo "uplot@$UPLOT_VERSION: integrity mismatch" >&2
  echo "  want $UPLOT_INTEGRITY" >&2
  echo "  got  $got" >&2
  exit 1
fi

tar -xzf "$tarball" -C "$tmp"
cp "$tmp/package/dist/uPlot.iife.min.js" "$dest/uPlot.iife.min.js"
cp "$tmp/package/dist/uPlot.min.css" "$dest/uPlot.min.css"
cp "$tmp/package/LICENSE" "$dest/LICENSE"
echo "$UPLOT_VERSION" >"$dest/VERSION"
rm -rf "$tmp"
echo "uplot@$UPLOT_VERSION (integrity checked) -> ${dest#"$root"/}"
