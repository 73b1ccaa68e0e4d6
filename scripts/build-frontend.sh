#!/usr/bin/env bash
# Build the SPA into frontend/dist. Until the Vue app lands, a static page stands in for it.
set -euo pipefail
cd "$(dirname "$0")/../frontend"
if [ -f package.json ]; then
    npm ci --no-audit --no-fund
    npm run build
else
    mkdir -p dist
    cp placeholder/index.html dist/index.html
fi
