#!/usr/bin/env bash
# Start the API, the ingest workers and nginx in the foreground; Ctrl-C stops them all.
set -euo pipefail
cd "$(dirname "$0")/.."
export QUIRE_DATA_DIR=${QUIRE_DATA_DIR:-$PWD/data}
api_port=${QUIRE_PORT:-8000}
web=${QUIRE_WEB_LISTEN:-127.0.0.1:8080}
mkdir -p "$QUIRE_DATA_DIR"
pids=()
stop() {
    trap - INT TERM EXIT
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap stop INT TERM EXIT
# The reranker is optional and downloaded: offer it once, to a person at a terminal only (never
# in CI, under a pipe or without a tty). A "no" is remembered in the data directory.
declined="$QUIRE_DATA_DIR/models/.reranker-declined"
if [ -t 0 ] && [ -t 1 ] && [ -z "${CI:-}" ] && [ ! -e "$declined" ] \
    && ! .venv/bin/quire models status reranker >/dev/null 2>&1; then
    echo "Search reranks its results with a cross-encoder when one is installed (about 23 MB"
    echo "from the Hugging Face Hub; HF_ENDPOINT picks a mirror)."
    read -r -p "Pull it now? [Y/n] " answer || answer=n
    case "${answer:-y}" in
        [yY]*) .venv/bin/quire models pull reranker || echo "(continuing without the reranker)" >&2 ;;
        *) mkdir -p "$(dirname "$declined")" && touch "$declined"
           echo "Not asking again; \`.venv/bin/quire models pull reranker\` any time." ;;
    esac
fi
wait_for() {
    for _ in $(seq 1 150); do
        curl -sf "$1" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    echo "$1 did not answer in 30 s" >&2
    return 1
}
# The API migrates the database first; the worker and nginx start once it answers.
.venv/bin/quire serve --port "$api_port" & pids+=($!)
wait_for "http://127.0.0.1:$api_port/api/health"
# Ingest workers: QUIRE_WORKERS, else one per core as memory allows (cli/common.py), so a book
# does not queue behind the files uploaded before it.
workers=$(.venv/bin/python -c 'from quire.cli.common import default_workers; from quire.config import Settings; print(default_workers(Settings()))')
for _ in $(seq 1 "$workers"); do
    .venv/bin/quire worker & pids+=($!)
done
# Watched folders (QUIRE_WATCH_DIRS): `quire watch` keeps them in step, beside the worker.
if [ -n "${QUIRE_WATCH_DIRS:-}" ]; then
    .venv/bin/quire watch & pids+=($!)
fi
max_mb=${QUIRE_MAX_UPLOAD_MB:-200}
nginx/run.sh "$QUIRE_DATA_DIR/nginx" "$web" "127.0.0.1:$api_port" frontend/dist "$((max_mb + 50))m" & pids+=($!)
wait_for "http://$web/api/health"
echo
echo "  Quire is running:  http://$web/"
echo "  API docs:          http://$web/api/docs     data: $QUIRE_DATA_DIR"
echo "  Ctrl-C to stop."
echo
wait -n
