#!/usr/bin/env bash
# Installs Debian's chromium, which the HTML report's real-browser tests drive headless
# (pkg/present/htmlreport/browsertest), when /usr/bin/chromium is missing. It uses the machine's own apt
# sources. Re-runnable: an installed chromium is left alone.
set -euo pipefail

CHROMIUM=/usr/bin/chromium

if [ -x "$CHROMIUM" ]; then
  echo "chromium: $("$CHROMIUM" --version 2>/dev/null | tail -1)"
  exit 0
fi
command -v apt-get >/dev/null || { echo "$CHROMIUM is missing and there is no apt-get: install Debian's chromium package" >&2; exit 1; }
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "installing chromium needs root (or sudo)" >&2; exit 1; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
# An install an earlier run left half done is finished first.
$sudo dpkg --configure -a
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
[ -x "$CHROMIUM" ] || { echo "apt-get installed chromium but $CHROMIUM is still missing" >&2; exit 1; }
echo "chromium: $("$CHROMIUM" --version 2>/dev/null | tail -1)"
