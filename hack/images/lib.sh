# shellcheck shell=bash disable=SC2034
# Shared helpers for hack/images/*.sh (sourced, not executed).
# Every image is a tarball under bin/images/ plus a NAME.inputs file holding the hash of
# everything that went into it; a script whose inputs hash is unchanged skips the rebuild.
set -euo pipefail
shopt -s inherit_errexit  # errexit inside $(...) too

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=hack/versions.env
source "$root/hack/versions.env"
images="$root/bin/images"
mkdir -p "$images"
export GOTOOLCHAIN=local

log() { echo ">> $*" >&2; }

# inputs_hash FILE... : one hash over the named files' contents and the extra strings in $EXTRA_INPUTS.
inputs_hash() {
  { cat "$@"; echo "${EXTRA_INPUTS:-}"; } | sha256sum | cut -d' ' -f1
}

# up_to_date NAME HASH : true when bin/images/NAME.tar exists and was built from HASH.
up_to_date() {
  [ -s "$images/$1.tar" ] && [ "$(cat "$images/$1.inputs" 2>/dev/null)" = "$2" ]
}

# mark_built NAME HASH
mark_built() { echo "$2" >"$images/$1.inputs"; }

# imgpack: the repo's packer (hack/imgpack), built on first use.
imgpack() {
  if [ ! -x "$root/bin/imgpack" ] || [ -n "$(find "$root/hack/imgpack" -newer "$root/bin/imgpack" -type f)" ]; then
    (cd "$root/hack/imgpack" && go build -o "$root/bin/imgpack" .)
  fi
  "$root/bin/imgpack" "$@"
}

# --- Debian rootfs layers (debootstrap) -------------------------------------------------
# Images with Debian software (nginx now; postgresql, prosody, ... later) start from a minbase
# rootfs debootstrapped from the mirror apt already uses here, with the packages included,
# tarred as one layer. The tarball is cached in bin/images/.cache/ under a key of suite,
# mirror and packages; FORCE=1 rebuilds it (e.g. for Debian security updates).
DEBIAN_SUITE=bookworm

debian_mirror() {
  # DEBIAN_MIRROR, else the Debian mirror apt is configured with (deb822 .sources, else
  # one-line sources.list): the repository names none.
  local m=${DEBIAN_MIRROR:-}
  [ -n "$m" ] || m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ && $2 ~ /\/debian\/?$/ {print $2; exit}' || true)
  [ -n "$m" ] || m=$(awk -v s="$DEBIAN_SUITE" '$1=="deb" && $3==s {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  if [ -z "$m" ]; then
    echo "no Debian mirror: apt's sources name none for $DEBIAN_SUITE; set DEBIAN_MIRROR=<url of a Debian mirror>" >&2
    return 1
  fi
  echo "$m"
}

# debian_rootfs_path NAME PACKAGES : where the cached rootfs tarball for these inputs lives.
debian_rootfs_path() {
  local key mirror
  mirror=$(debian_mirror)
  key=$(echo "$DEBIAN_SUITE $mirror $2 rootfs-v1" | sha256sum | cut -c1-16)
  echo "$images/.cache/$1-rootfs-$key.tar"
}

# debian_rootfs NAME PACKAGES : build the rootfs tarball unless cached; prints its path.
# PACKAGES is comma-separated (debootstrap --include).
debian_rootfs() {
  local name=$1 packages=$2 tar dir mirror
  tar=$(debian_rootfs_path "$name" "$packages")
  if [ -s "$tar" ] && [ -z "${FORCE:-}" ]; then
    echo "$tar"
    return 0
  fi
  command -v debootstrap >/dev/null || {
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >/dev/null
  }
  mirror=$(debian_mirror)
  dir="$images/.cache/$name-rootfs"
  mkdir -p "$images/.cache"
  _rootfs_clean "$dir"
  log "debootstrap $DEBIAN_SUITE (minbase + $packages) from $mirror"
  if ! debootstrap --variant=minbase --include="$packages" "$DEBIAN_SUITE" "$dir" "$mirror" \
    >"$images/.cache/$name-debootstrap.log" 2>&1; then
    tail -20 "$images/.cache/$name-debootstrap.log" >&2
    _rootfs_clean "$dir"
    return 1
  fi
  # Trim what a container never uses.
  rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/* "$dir"/usr/share/doc \
    "$dir"/usr/share/man "$dir"/usr/share/locale "$dir"/var/log/*.log "$dir"/var/cache/debconf/*-old
  rm -f "$images/.cache/$name"-rootfs-*.tar
  # One layer; device nodes, proc and sys are the runtime's business.
  tar --numeric-owner --exclude=./dev/* --exclude=./proc/* --exclude=./sys/* -C "$dir" -cf "$tar.tmp" .
  mv "$tar.tmp" "$tar"
  _rootfs_clean "$dir"
  echo "$tar"
}

_rootfs_clean() {
  # A crashed debootstrap may have left proc/sys mounted inside: unmount before deleting.
  local m
  awk '{print $5}' /proc/self/mountinfo | { grep "^$1/" || true; } | sort -r |
    while read -r m; do umount -l "$m" || true; done
  rm -rf --one-file-system "$1"
}

# rootfs_user SRC_TAR USER : "uid:gid" of USER in the rootfs' /etc/passwd, so an image's config
# names a numeric user (the kubelet can only prove a number is not root).
rootfs_user() {
  tar -xOf "$1" ./etc/passwd | awk -F: -v u="$2" '$1 == u {print $3 ":" $4; found=1} END {exit !found}'
}

# --- Images of Debian software: the steps every such script shares ---------------------
# debian_image NAME IMAGE PACKAGES INPUT... : exits the script when bin/images/NAME.tar was
# built from these inputs and this rootfs (FORCE=1 rebuilds); otherwise builds (or reuses) the
# rootfs and sets rootfs_tar, for the script's own layer, and image_hash, for pack_image.
debian_image() {
  local name=$1 image=$2 packages=$3
  shift 3
  image_start=$(date +%s)
  rootfs_tar=$(debian_rootfs_path "$name" "$packages")
  image_hash=$(EXTRA_INPUTS="$image $rootfs_tar" inputs_hash "$@")
  if [ -z "${FORCE:-}" ] && up_to_date "$name" "$image_hash" && [ -s "$rootfs_tar" ]; then
    log "$name image up to date: bin/images/$name.tar"
    exit 0
  fi
  rootfs_tar=$(debian_rootfs "$name" "$packages")
}

# pack_image NAME IMAGE IMGPACK_ARG... : packs bin/images/NAME.tar and records debian_image's
# inputs hash, so the next run skips it.
pack_image() {
  local name=$1 image=$2
  shift 2
  imgpack -name "$image" -out "$images/$name.tar.tmp" "$@"
  mv "$images/$name.tar.tmp" "$images/$name.tar"
  mark_built "$name" "$image_hash"
  log "built $image -> bin/images/$name.tar ($(du -h "$images/$name.tar" | cut -f1)) in $(($(date +%s) - image_start)) s"
}
