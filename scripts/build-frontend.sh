#!/usr/bin/env bash
# Build the Vue app into frontend/dist (vue-tsc type check + Vite). `npm ci` runs only when
# package-lock.json changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/../frontend"
stamp=node_modules/.quire-installed
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
    npm ci --no-audit --no-fund --loglevel=error
    touch "$stamp"
fi
npm run build --silent
