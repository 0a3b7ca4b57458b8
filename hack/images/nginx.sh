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

image=fleetbench/nginx:dev
here="$root/hack/images"
debian_image nginx "$image" "nginx-light openssl" "$here/nginx.sh" "$here/nginx.conf" "$here/nginx-entrypoint.sh"

files=$(mktemp -d)
trap 'rm -rf "$files"' EXIT
echo "fleetbench nginx ok" >"$files/index.html"
head -c 1024 /dev/zero | tr '\0' x >"$files/1k.txt"
head -c 16384 /dev/zero | tr '\0' x >"$files/16k.txt"
pack_image nginx "$image" -rootfs "$rootfs_tar" \
  -file "$here/nginx.conf:/etc/nginx/nginx.conf" -file "$files/index.html:/var/www/html/index.html" \
  -file "$files/1k.txt:/var/www/html/1k.txt" -file "$files/16k.txt:/var/www/html/16k.txt" \
  -file "$here/nginx-entrypoint.sh:/usr/local/bin/fleetbench-nginx" \
  -entrypoint /usr/local/bin/fleetbench-nginx -user "$(rootfs_user "$rootfs_tar" www-data)" \
  -env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
