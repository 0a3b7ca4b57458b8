#!/bin/sh
# Entrypoint of fleetbench/nginx:dev. Writes the parts of the config that depend on the
# component's settings into /run/fleetbench, which nginx.conf includes, then runs nginx.
#   PROXY_PASS=http://host:port   forward /api/ to the application behind the web server, as
#                                 seed 000's Apache fronted its daemon (e.g. $(TARGET_APP_URL)).
#   FLEETBENCH_TLS=1              serve HTTPS on 443 with a self-signed certificate made now
#                                 (the operator sets it for `tls: true`; k6 scripts then need
#                                 insecureSkipTLSVerify).
#   LISTEN_PORT=[ADDR:]N          listen there instead (local runs on the host's network only).
# Runs as the image's user (www-data) and writes only under /run (see nginx.conf).
set -eu
conf=/run/fleetbench
mkdir -p "$conf" /run/nginx
: >"$conf/listen.conf"
: >"$conf/locations.conf"
if [ "${FLEETBENCH_TLS:-}" = "1" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=fleetbench-target" \
    -keyout "$conf/tls.key" -out "$conf/tls.crt" 2>/dev/null
  printf 'listen %s ssl default_server reuseport;\nssl_certificate %s/tls.crt;\nssl_certificate_key %s/tls.key;\n' "${LISTEN_PORT:-443}" "$conf" "$conf" >"$conf/listen.conf"
else
  echo "listen ${LISTEN_PORT:-80} default_server reuseport;" >"$conf/listen.conf"
fi
if [ -n "${PROXY_PASS:-}" ]; then
  printf 'location /api/ {\n    proxy_pass %s;\n    proxy_http_version 1.1;\n    proxy_set_header Connection "";\n}\n' "$PROXY_PASS" >"$conf/locations.conf"
fi
# -e stderr: nginx opens its compiled-in error log before reading the config, which fails
# (with an alert) when not root.
exec /usr/sbin/nginx -e stderr -g "daemon off;"
