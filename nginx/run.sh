#!/usr/bin/env bash
# Run nginx in the foreground with its own prefix and temp paths (no root config touched).
# Usage: nginx/run.sh PREFIX_DIR LISTEN API_ADDR ROOT_DIR [MAX_BODY]
#   e.g. nginx/run.sh data/nginx 127.0.0.1:8080 127.0.0.1:8000 frontend/dist 250m
set -euo pipefail
prefix=$(realpath -m "$1"); listen=$2; api=$3; root=$(realpath -m "$4"); max_body=${5:-250m}
here=$(cd "$(dirname "$0")" && pwd)
# Beyond the loopback only with an API token (the API checks it; nginx passes the header on).
case "$listen" in
    127.*|localhost|localhost:*|"[::1]"*|unix:*) ;;
    *) case "${QUIRE_ALLOW_OPEN_BIND:-}" in 1|true|True|TRUE|yes|on) ;; *)
        if [ -z "${QUIRE_API_TOKEN:-}" ]; then
            echo "nginx/run.sh: refusing to listen on $listen without an API token: set" \
                "QUIRE_API_TOKEN (for nginx and the API), or listen on 127.0.0.1" >&2
            exit 2
        fi ;; esac ;;
esac
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
mime=/etc/nginx/mime.types
mkdir -p "$prefix"/{client_body,proxy,fastcgi,uwsgi,scgi,logs}
sed -e "s#@@PREFIX@@#$prefix#g" -e "s#@@LISTEN@@#$listen#g" -e "s#@@API@@#$api#g" \
    -e "s#@@ROOT@@#$root#g" -e "s#@@MAX_BODY@@#$max_body#g" -e "s#@@MIME_TYPES@@#$mime#g" \
    "$here/nginx.conf.template" > "$prefix/nginx.conf"
# As root, nginx's workers would run as "nobody" and could not read a private checkout: run them
# as the owner of the files they serve instead.
if [ "$(id -u)" -eq 0 ]; then
    sed -i "1i user $(stat -c %U "$root") $(stat -c %G "$root");" "$prefix/nginx.conf"
fi
"$nginx_bin" -t -q -p "$prefix" -c "$prefix/nginx.conf"
exec "$nginx_bin" -p "$prefix" -c "$prefix/nginx.conf"
