# Two images from one file:
#   docker build --target web .   nginx serving the built SPA and proxying /api/ and /v1/
#   docker build .                the API and worker image (one image, two commands; the default)
# Build argument (docs/models.md):
#   --build-arg QUIRE_PULL_RERANKER=1   bake the reranker into the API image at build time
#       (`quire models pull reranker`, ~23 MB; QUIRE_RERANK_REPO / QUIRE_RERANK_REVISION and
#       HF_ENDPOINT may be passed as build arguments too). 0, the default: pull it later with
#       `docker compose exec api quire models pull reranker` (it lands in the /data volume).
ARG QUIRE_PULL_RERANKER=0

# --- the web app, built with the same Node.js major version as development -----------------
FROM node:20-bookworm-slim AS web-build
WORKDIR /src/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

FROM nginx:1.27-alpine AS web
COPY nginx/docker.conf /etc/nginx/conf.d/default.conf
COPY --from=web-build /src/frontend/dist /usr/share/nginx/html

# --- API and worker -------------------------------------------------------------------------
FROM python:3.11-slim-bookworm AS api-base
RUN apt-get update \
 && apt-get install -y --no-install-recommends tesseract-ocr tesseract-ocr-eng poppler-utils curl \
      tesseract-ocr-jpn tesseract-ocr-jpn-vert tesseract-ocr-chi-sim tesseract-ocr-chi-sim-vert \
      tesseract-ocr-chi-tra tesseract-ocr-chi-tra-vert tesseract-ocr-kor tesseract-ocr-ara \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md ./
COPY backend ./backend
RUN pip install --no-cache-dir -e .
ENV QUIRE_DATA_DIR=/data QUIRE_HOST=0.0.0.0 OMP_THREAD_LIMIT=1
VOLUME /data
EXPOSE 8000
CMD ["quire", "serve"]

# --- the reranker, baked in or not (one of these two stages is the image) --------------------
FROM api-base AS reranker-0

FROM api-base AS reranker-1
ARG QUIRE_RERANK_REPO=cross-encoder/ms-marco-MiniLM-L-6-v2
ARG QUIRE_RERANK_REVISION=main
ARG HF_ENDPOINT=https://huggingface.co
# Outside /data, which a volume covers at run time; the setting points search at it.
ENV QUIRE_RERANK_MODEL_DIR=/opt/quire/models/reranker \
    QUIRE_RERANK_REPO=$QUIRE_RERANK_REPO QUIRE_RERANK_REVISION=$QUIRE_RERANK_REVISION
RUN HF_HOME=/tmp/hf quire models pull reranker && rm -rf /tmp/hf

FROM reranker-${QUIRE_PULL_RERANKER} AS api
