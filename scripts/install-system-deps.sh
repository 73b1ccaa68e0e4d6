#!/usr/bin/env bash
# Install the Debian/Ubuntu packages Quire needs, only those missing (quick the second time).
set -euo pipefail
need=()
have() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for pkg in tesseract-ocr tesseract-ocr-eng poppler-utils nginx chromium python3-venv; do
    have "$pkg" || need+=("$pkg")
done
# docker-compose (v1, works without an engine) validates docker-compose.yml in the tests.
have docker-compose || need+=(docker-compose)
if [ ${#need[@]} -eq 0 ]; then
    exit 0
fi
echo "installing Debian packages: ${need[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
