"""Hybrid retrieval: BM25 (FTS5), dense (sqlite-vec), exact (trigram), fusion, rerank."""
