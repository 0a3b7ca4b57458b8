#!/usr/bin/env bash
# Builds fleetbench/postgresql:dev, the `database` component with engine postgresql: PostgreSQL
# 15 from Debian bookworm (debian_rootfs, cached), trimmed of what a test database never uses
# (the LLVM JIT, ~140 MB, and the cluster the package's postinst created), plus the entrypoint
# hack/images/db/postgresql-entrypoint.sh (its header documents the environment).
#
# Runs as Debian's postgres user (numeric uid:gid read from the rootfs and put in the image
# config; 100:102 with today's bookworm package set). Read-only root filesystem works with
# writable emptyDirs on /var/lib/fleetbench-db (data), /run (socket; or just /run/postgresql)
# and /tmp. Listens on 5432. Output: bin/images/postgresql.tar (cached by input hash; FORCE=1
# rebuilds everything, including the rootfs).
# shellcheck source=hack/images/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=hack/images/db/trim.sh
source "$root/hack/images/db/trim.sh"

image=fleetbench/postgresql:dev
here="$root/hack/images"
debian_image postgresql "$image" postgresql-15 "$here/postgresql.sh" "$here/db/postgresql-entrypoint.sh" "$here/db/trim.sh"
trimmed=$(rootfs_trim postgresql "$rootfs_tar" \
  './usr/lib/x86_64-linux-gnu/libLLVM-*' './usr/lib/x86_64-linux-gnu/libz3.so*' \
  './usr/lib/postgresql/15/lib/llvmjit*' './usr/lib/postgresql/15/lib/bitcode' \
  './var/lib/postgresql/15/main' './etc/postgresql/15/main')

pack_image postgresql "$image" -rootfs "$trimmed" \
  -file "$here/db/postgresql-entrypoint.sh:/usr/local/bin/fleetbench-postgresql" \
  -entrypoint /usr/local/bin/fleetbench-postgresql -user "$(rootfs_user "$trimmed" postgres)" \
  -env LANG=C.UTF-8 -env PGDATA=/var/lib/fleetbench-db/pgdata
