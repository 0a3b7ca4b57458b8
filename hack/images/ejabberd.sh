#!/usr/bin/env bash
# Builds fleetbench/ejabberd:dev, the `xmppBroker` component with engine ejabberd, with the same
# contract as fleetbench/prosody:dev: ejabberd 23.01 from Debian bookworm (debian_rootfs,
# cached) with erlang-p1-sqlite3 and the sqlite3 CLI (accounts live in SQLite so the entrypoint
# can bulk-load 100k of them in a second; ejabberdctl register per account takes minutes), plus
# hack/images/xmpp/ejabberd.yml as /etc/ejabberd/ejabberd.yml, hack/images/xmpp/ejabberdctl.cfg
# as /etc/default/ejabberd and the entrypoint hack/images/xmpp/ejabberd-entrypoint.sh (its
# header documents the environment).
#
# Runs as Debian's ejabberd user (numeric uid:gid read from the rootfs and put in the image
# config; 101:102 with today's bookworm package set), never needs root, capabilities or epmd.
# Read-only root filesystem works with one writable emptyDir on /var/lib/ejabberd (mnesia,
# accounts, HOME with the Erlang cookie). Listens on 5222 (c2s) and 5280 (HTTP: /xmpp-websocket,
# /http-bind), backlog 4096 on both. No TLS, SASL PLAIN over plain connections: a test setup.
# See hack/images/xmpp/README.md. Output: bin/images/ejabberd.tar (cached by input hash;
# FORCE=1 rebuilds everything, including the rootfs).
# shellcheck source=hack/images/lib.sh
source "$(dirname "$0")/lib.sh"

image=fleetbench/ejabberd:dev
here="$root/hack/images"
debian_image ejabberd "$image" "ejabberd,erlang-p1-sqlite3,sqlite3" \
  "$here/ejabberd.sh" "$here/xmpp/ejabberd-entrypoint.sh" "$here/xmpp/ejabberd.yml" "$here/xmpp/ejabberdctl.cfg"

pack_image ejabberd "$image" -rootfs "$rootfs_tar" \
  -file "$here/xmpp/ejabberd.yml:/etc/ejabberd/ejabberd.yml" \
  -file "$here/xmpp/ejabberdctl.cfg:/etc/default/ejabberd" \
  -file "$here/xmpp/ejabberd-entrypoint.sh:/usr/local/bin/fleetbench-ejabberd" \
  -entrypoint /usr/local/bin/fleetbench-ejabberd -user "$(rootfs_user "$rootfs_tar" ejabberd)" \
  -env LANG=C.UTF-8 -env HOME=/var/lib/ejabberd
