#!/usr/bin/env bash
# run-local.sh IMAGE_TAR [KEY=VALUE...] : run an image tarball's entrypoint on this machine,
# without a cluster, the way a restricted pod would: root filesystem read-only, emptyDir-like
# tmpfs (mode 0777) on each path of RUN_LOCAL_WRITABLE (default: the database images' /tmp /run
# /var/lib/fleetbench-db), as the image's user, in the host's network namespace (so pick a
# non-default port). Needs root (mount namespace + chroot).
# Runs in the foreground; the process is the entrypoint itself, stop it with SIGTERM/SIGINT.
# The unpacked rootfs is kept in $RUN_LOCAL_DIR (default /tmp/fleetbench-run-local/NAME).
# RUN_LOCAL_DATA=/some/dir bind-mounts that directory (made mode 0777, like an emptyDir) on
# /var/lib/fleetbench-db instead of a tmpfs, so a second run sees the first one's data, as a
# restarted container sees its pod's emptyDir. RUN_LOCAL_USER=uid[:gid] overrides the image's user.
#
#   hack/images/run-local.sh bin/images/postgresql.tar PORT=55432
#   RUN_LOCAL_WRITABLE="/var/lib/prosody /tmp" hack/images/run-local.sh bin/images/prosody.tar XMPP_USERS=2000
set -euo pipefail
tarball=$(realpath "$1")
shift
name=$(basename "$tarball" .tar)
dir=${RUN_LOCAL_DIR:-/tmp/fleetbench-run-local/$name}
rootfs=$dir/rootfs
work=$dir/unpack
writable=${RUN_LOCAL_WRITABLE:-/tmp /run /var/lib/fleetbench-db}

# Unpack again only when the tarball changed.
if [ ! -e "$dir/stamp" ] || [ "$tarball" -nt "$dir/stamp" ]; then
  rm -rf --one-file-system "$dir"
  mkdir -p "$rootfs" "$work"
  tar -xf "$tarball" -C "$work"
  python3 - "$work" >"$dir/layers" <<'PY'
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))[0]
c = json.load(open(sys.argv[1] + "/" + m["Config"]))["config"]
print("USER=" + (c.get("User") or "0"))
print("ENTRY=" + json.dumps((c.get("Entrypoint") or []) + (c.get("Cmd") or [])))
print("ENV=" + json.dumps(c.get("Env") or []))
for layer in m["Layers"]:
    print("LAYER=" + layer)
PY
  grep '^LAYER=' "$dir/layers" | cut -d= -f2- | while read -r l; do
    tar --numeric-owner -xzf "$work/$l" -C "$rootfs"
  done
  rm -rf "$work"
  mkdir -p "$rootfs/proc" "$rootfs/dev"
  touch "$dir/stamp"
fi
for w in $writable; do mkdir -p "$rootfs$w"; done

user=${RUN_LOCAL_USER:-$(grep '^USER=' "$dir/layers" | cut -d= -f2-)}
mapfile -t entry < <(grep '^ENTRY=' "$dir/layers" | cut -d= -f2- | python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin)))')
mapfile -t env < <(grep '^ENV=' "$dir/layers" | cut -d= -f2- | python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin)))')
uid=${user%%:*}
gid=${user#*:}
[ "$gid" != "$user" ] || gid=$uid

if [ -n "${RUN_LOCAL_DATA:-}" ]; then
  mkdir -p "$RUN_LOCAL_DATA" "$rootfs/var/lib/fleetbench-db"
  chmod 0777 "$RUN_LOCAL_DATA"
fi
# shellcheck disable=SC2016
exec unshare -m --propagation private bash -c '
  set -e
  r=$1; uid=$2; gid=$3; writable=$4; data=$5; shift 5
  vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  mount --bind "$r" "$r"
  for d in $writable; do mount -t tmpfs -o mode=0777,size=512m tmpfs "$r$d"; done
  if [ -n "$data" ]; then mount --bind "$data" "$r/var/lib/fleetbench-db"; fi
  mount -t proc proc "$r/proc"
  mount --rbind /dev "$r/dev"
  mount -o remount,bind,ro "$r"
  # env runs on the host side: images without /usr/bin/env (static binaries) work too.
  exec env -i "${vars[@]}" chroot --userspec="$uid:$gid" "$r" "$@"
' run-local "$rootfs" "$uid" "$gid" "$writable" "${RUN_LOCAL_DATA:-}" "${env[@]}" "$@" -- "${entry[@]}"
