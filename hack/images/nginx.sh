#!/usr/bin/env bash
# Builds fleetbench/nginx:dev, the HTTP target for tests: a minbase Debian bookworm rootfs
# debootstrapped from the mirror apt uses here, with nginx-light (one cached layer, see
# debian_rootfs in lib.sh), plus a small layer with nginx.conf and the files it serves, so
# editing nginx.conf only repacks (about 2 s). Skipped when nothing changed; FORCE=1 rebuilds
# everything, including the rootfs.
# Serves: / ("fleetbench nginx ok"), /1k.txt, /16k.txt, /healthz, /nginx_status (stub_status).
# Runs as www-data (numeric, for the restricted Pod Security level); writes only under /run.
# Output: bin/images/nginx.tar
# shellcheck source=hack/images/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=hack/images/db/trim.sh
source "$root/hack/images/db/trim.sh"  # rootfs_user

image=fleetbench/nginx:dev
packages="nginx-light openssl"
here="$root/hack/images"

rootfs_tar=$(debian_rootfs_path nginx "$packages")
hash=$(EXTRA_INPUTS="$image $rootfs_tar" inputs_hash "$here/nginx.sh" "$here/nginx.conf" "$here/nginx-entrypoint.sh" "$root/hack/images/db/trim.sh")
if [ -z "${FORCE:-}" ] && up_to_date nginx "$hash" && [ -s "$rootfs_tar" ]; then
  log "nginx image up to date: bin/images/nginx.tar"
  exit 0
fi
rootfs_tar=$(debian_rootfs nginx "$packages")

files=$(mktemp -d)
trap 'rm -rf "$files"' EXIT
echo "fleetbench nginx ok" >"$files/index.html"
head -c 1024 /dev/zero | tr '\0' x >"$files/1k.txt"
head -c 16384 /dev/zero | tr '\0' x >"$files/16k.txt"
imgpack -name "$image" -out "$images/nginx.tar.tmp" -rootfs "$rootfs_tar" \
  -file "$here/nginx.conf:/etc/nginx/nginx.conf" -file "$files/index.html:/var/www/html/index.html" \
  -file "$files/1k.txt:/var/www/html/1k.txt" -file "$files/16k.txt:/var/www/html/16k.txt" \
  -file "$here/nginx-entrypoint.sh:/usr/local/bin/fleetbench-nginx" \
  -entrypoint /usr/local/bin/fleetbench-nginx -user "$(rootfs_user "$rootfs_tar" www-data)" \
  -env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mv "$images/nginx.tar.tmp" "$images/nginx.tar"
mark_built nginx "$hash"
log "built $image -> bin/images/nginx.tar ($(du -h "$images/nginx.tar" | cut -f1))"
