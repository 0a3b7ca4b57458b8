#!/usr/bin/env bash
# Builds fleetbench/apache:dev, the webServer component with engine apache: Apache 2.4 from
# Debian bookworm with the event MPM (debian_rootfs, cached), plus a small layer with
# apache.conf (as /etc/apache2/fleetbench.conf), the files it serves and apache-entrypoint.sh,
# so editing those only repacks. Same contract as fleetbench/nginx:dev (nginx.sh): serves
# / ("fleetbench apache ok"), /1k.txt, /16k.txt, /healthz, /server-status (mod_status; ?auto
# has "Total Accesses"); PROXY_PASS proxies /api/; FLEETBENCH_TLS=1 serves HTTPS on 443 with a
# certificate made at start, else HTTP on 80. Root master, www-data (33:33) workers, like nginx;
# with a read-only root filesystem it needs a writable /run (emptyDir).
# Output: bin/images/apache.tar (skipped when nothing changed; FORCE=1 rebuilds everything).
# shellcheck source=hack/images/lib.sh
source "$(dirname "$0")/lib.sh"

image=fleetbench/apache:dev
here="$root/hack/images"
debian_image apache "$image" "apache2,openssl" "$here/apache.sh" "$here/apache.conf" "$here/apache-entrypoint.sh"

files=$(mktemp -d)
trap 'rm -rf "$files"' EXIT
echo "fleetbench apache ok" >"$files/index.html"
echo "ok" >"$files/healthz.txt"
head -c 1024 /dev/zero | tr '\0' x >"$files/1k.txt"
head -c 16384 /dev/zero | tr '\0' x >"$files/16k.txt"
pack_image apache "$image" -rootfs "$rootfs_tar" \
  -file "$here/apache.conf:/etc/apache2/fleetbench.conf" -file "$files/index.html:/var/www/html/index.html" \
  -file "$files/1k.txt:/var/www/html/1k.txt" -file "$files/16k.txt:/var/www/html/16k.txt" \
  -file "$files/healthz.txt:/var/www/fleetbench/healthz.txt" \
  -file "$here/apache-entrypoint.sh:/usr/local/bin/fleetbench-apache" \
  -entrypoint /usr/local/bin/fleetbench-apache -user "$(rootfs_user "$rootfs_tar" www-data)"
