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

image=fleetbench/prosody:dev
here="$root/hack/images"
debian_image prosody "$image" "prosody,lua-socket,lua-sec,lua-bitop,lua-expat,lua-filesystem,lua-unbound" \
  "$here/prosody.sh" "$here/xmpp/prosody-entrypoint.sh" "$here/xmpp/prosody.cfg.lua" "$here/xmpp/provision-accounts.lua"

pack_image prosody "$image" -rootfs "$rootfs_tar" \
  -file "$here/xmpp/prosody.cfg.lua:/etc/prosody/prosody.cfg.lua" \
  -file "$here/xmpp/provision-accounts.lua:/usr/local/lib/fleetbench/provision-accounts.lua" \
  -file "$here/xmpp/prosody-entrypoint.sh:/usr/local/bin/fleetbench-prosody" \
  -entrypoint /usr/local/bin/fleetbench-prosody -user "$(rootfs_user "$rootfs_tar" prosody)" \
  -env LANG=C.UTF-8 -env PROSODY_DATA=/var/lib/prosody
