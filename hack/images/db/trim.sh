# shellcheck shell=bash disable=SC2154  # $images comes from lib.sh
# rootfs_trim NAME SRC_TAR PATTERN... : a copy of a debian_rootfs tarball without the members
# matching the patterns (GNU tar --delete --wildcards), cached in bin/images/.cache/ under a key
# of the source and the patterns; prints its path. Sourced after lib.sh.
rootfs_trim() {
  local name=$1 src=$2 key out
  shift 2
  key=$(echo "$src $* trim-v1" | sha256sum | cut -c1-16)
  out="$images/.cache/$name-trimmed-$key.tar"
  if [ -s "$out" ] && [ -z "${FORCE:-}" ]; then
    echo "$out"
    return 0
  fi
  rm -f "$images/.cache/$name"-trimmed-*.tar
  cp "$src" "$out.tmp"
  tar --delete --wildcards -f "$out.tmp" "$@"
  mv "$out.tmp" "$out"
  echo "$out"
}
