#!/usr/bin/env bash
# Install the Debian/Ubuntu packages Quire needs, only those missing (quick the second time).
set -euo pipefail
need=()
have() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for pkg in tesseract-ocr tesseract-ocr-eng poppler-utils nginx chromium python3-venv; do
    have "$pkg" || need+=("$pkg")
done
# OCR of pages in other scripts (text/scripts.py picks the pack from the page's script;
# *-vert read vertical writing). Without a pack such pages are read as English, with a notice.
for lang in jpn jpn-vert chi-sim chi-sim-vert chi-tra chi-tra-vert kor ara; do
    have "tesseract-ocr-$lang" || need+=("tesseract-ocr-$lang")
done
# LibreOffice without its GUI: renders Word, OpenDocument and slide files as PDF for the source
# view and converts legacy .doc/.rtf, .ppt and .xls (formats/office/convert.py); optional for
# Quire, installed here so that the tests exercise it.
for pkg in libreoffice-writer-nogui libreoffice-impress-nogui libreoffice-calc-nogui; do
    have "$pkg" || need+=("$pkg")
done
# A TrueType font with CJK glyphs for the tests that draw Japanese PDFs (tests/ingest/*_cjk.py).
have fonts-droid-fallback || need+=(fonts-droid-fallback)
# docker-compose (v1, works without an engine) validates docker-compose.yml in the tests.
have docker-compose || need+=(docker-compose)
# The web app's build (Vite 8) needs Node.js >= 20.19 with npm; Debian 12's own nodejs is 18, so
# an existing newer Node.js (e.g. NodeSource's) is kept and only a missing one is installed.
command -v node >/dev/null && command -v npm >/dev/null || need+=(nodejs npm)
if [ ${#need[@]} -gt 0 ]; then
    echo "installing Debian packages: ${need[*]}"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)'; then
    echo "Node.js $(node --version) is too old for the web app: install Node.js 20.19 or newer" >&2
    exit 1
fi
