#!/usr/bin/env bash
# Builds fleetbench/prosody:dev, the `xmppBroker` component with engine prosody: prosody 0.12
# from Debian bookworm (debian_rootfs, cached; the lua modules are named explicitly because
# debootstrap does not resolve the virtual lua5.4-* packages prosody depends on), plus
# hack/images/xmpp/prosody.cfg.lua as /etc/prosody/prosody.cfg.lua, the account provisioner and
# the entrypoint hack/images/xmpp/prosody-entrypoint.sh (its header documents the environment).
#
# Runs as Debian's prosody user (numeric uid:gid read from the rootfs and put in the image
# config; 100:102 with today's bookworm package set). Read-only root filesystem works with a
# writable emptyDir on /var/lib/prosody (accounts; PROSODY_DATA). Listens on 5222 (c2s) and 5280
# (HTTP: /xmpp-websocket, /http-bind, /metrics). No TLS, SASL PLAIN over plain connections: a
# test setup. See hack/images/xmpp/README.md. Output: bin/images/prosody.tar (cached by input
# hash; FORCE=1 rebuilds everything, including the rootfs).
# shellcheck source=hack/images/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=hack/images/db/trim.sh
source "$root/hack/images/db/trim.sh"

image=fleetbench/prosody:dev
packages="prosody,lua-socket,lua-sec,lua-bitop,lua-expat,lua-filesystem,lua-unbound"
here="$root/hack/images"
start=$(date +%s)

rootfs_tar=$(debian_rootfs_path prosody "$packages")
hash=$(EXTRA_INPUTS="$image $rootfs_tar" inputs_hash "$here/prosody.sh" "$here/xmpp/prosody-entrypoint.sh" \
  "$here/xmpp/prosody.cfg.lua" "$here/xmpp/provision-accounts.lua")
if [ -z "${FORCE:-}" ] && up_to_date prosody "$hash" && [ -s "$rootfs_tar" ]; then
  log "prosody image up to date: bin/images/prosody.tar"
  exit 0
fi
rootfs_tar=$(debian_rootfs prosody "$packages")
user=$(rootfs_user "$rootfs_tar" prosody)

imgpack -name "$image" -out "$images/prosody.tar.tmp" -rootfs "$rootfs_tar" \
  -file "$here/xmpp/prosody.cfg.lua:/etc/prosody/prosody.cfg.lua" \
  -file "$here/xmpp/provision-accounts.lua:/usr/local/lib/fleetbench/provision-accounts.lua" \
  -file "$here/xmpp/prosody-entrypoint.sh:/usr/local/bin/fleetbench-prosody" \
  -entrypoint /usr/local/bin/fleetbench-prosody -user "$user" \
  -env LANG=C.UTF-8 -env PROSODY_DATA=/var/lib/prosody
mv "$images/prosody.tar.tmp" "$images/prosody.tar"
mark_built prosody "$hash"
log "built $image (user $user) -> bin/images/prosody.tar ($(du -h "$images/prosody.tar" | cut -f1)) in $(($(date +%s) - start)) s"
