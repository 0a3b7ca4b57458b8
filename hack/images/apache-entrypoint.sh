#!/bin/sh
# Entrypoint of fleetbench/apache:dev (Apache 2.4 from Debian bookworm, event MPM): the contract
# of fleetbench/nginx:dev. Writes the parts of the config that depend on the component's
# settings into /run/fleetbench/apache/site.conf, which /etc/apache2/fleetbench.conf (hack/images/apache.conf) includes,
# then runs apache2 in the foreground (errors on stderr, no access log).
#   PROXY_PASS=http://host:port   forward /api/ to the application behind the web server
#                                 (mod_proxy_http, pooled keep-alive connections). Like nginx's
#                                 proxy_pass: without a path the URI goes on unchanged
#                                 (/api/x -> http://host:port/api/x); with one, /api/ is replaced.
#   FLEETBENCH_TLS=1              serve HTTPS on 443 with a self-signed certificate made now;
#                                 otherwise HTTP on 80.
#   LISTEN_PORT=[ADDR:]N          listen there instead (local runs on the host's network only).
# Runs as the image's user, www-data (the pod lets it bind 80/443; local runs pick a port).
# Writes only under /run (emptyDir with a read-only root filesystem).
set -eu
conf=/run/fleetbench/apache
mkdir -p "$conf"
site="$conf/site.conf"
if [ "${FLEETBENCH_TLS:-}" = "1" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=fleetbench-target" \
    -addext basicConstraints=critical,CA:FALSE -addext subjectAltName=DNS:fleetbench-target \
    -keyout "$conf/tls.key" -out "$conf/tls.crt" 2>/dev/null
  chmod 600 "$conf/tls.key"
  cat >"$site" <<CONF
LoadModule socache_shmcb_module /usr/lib/apache2/modules/mod_socache_shmcb.so
LoadModule ssl_module /usr/lib/apache2/modules/mod_ssl.so
Listen ${LISTEN_PORT:-443}
SSLEngine on
SSLCertificateFile $conf/tls.crt
SSLCertificateKeyFile $conf/tls.key
SSLSessionCache shmcb:$conf/ssl_scache(512000)
SSLProtocol all -SSLv3 -TLSv1 -TLSv1.1
CONF
else
  echo "Listen ${LISTEN_PORT:-80}" >"$site"
fi
if [ -n "${PROXY_PASS:-}" ]; then
  target=$PROXY_PASS
  case "$target" in
    *://*/*) ;;                         # has a path: it replaces /api/
    *) target="${target%/}/api/" ;;     # no path: keep /api/
  esac
  case "$target" in */) ;; *) target="$target/" ;; esac
  printf 'ProxyPass /api/ %s\nProxyPassReverse /api/ %s\n' "$target" "$target" >>"$site"
fi
exec /usr/sbin/apache2 -f /etc/apache2/fleetbench.conf -DFOREGROUND
