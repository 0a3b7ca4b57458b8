#!/usr/bin/env bash
# Builds fleetbench/mariadb:dev, the `database` component with engine mariadb: MariaDB 10.11
# from Debian bookworm (debian_rootfs, cached), without the data dir the package's postinst
# created (~120 MB), plus the entrypoint hack/images/db/mariadb-entrypoint.sh (its header
# documents the environment).
#
# Runs as Debian's mysql user (numeric uid:gid read from the rootfs and put in the image config;
# 100:101 with today's bookworm package set). Read-only root filesystem works with writable
# emptyDirs on /var/lib/fleetbench-db (data), /run (socket and pid file; or just /run/mysqld)
# and /tmp. Listens on 3306. Output: bin/images/mariadb.tar (cached by input hash; FORCE=1
# rebuilds everything, including the rootfs).
# shellcheck source=hack/images/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=hack/images/db/trim.sh
source "$root/hack/images/db/trim.sh"

image=fleetbench/mariadb:dev
here="$root/hack/images"
debian_image mariadb "$image" mariadb-server "$here/mariadb.sh" "$here/db/mariadb-entrypoint.sh" "$here/db/trim.sh"
trimmed=$(rootfs_trim mariadb "$rootfs_tar" './var/lib/mysql/?*')

pack_image mariadb "$image" -rootfs "$trimmed" \
  -file "$here/db/mariadb-entrypoint.sh:/usr/local/bin/fleetbench-mariadb" \
  -entrypoint /usr/local/bin/fleetbench-mariadb -user "$(rootfs_user "$trimmed" mysql)" -env LANG=C.UTF-8
