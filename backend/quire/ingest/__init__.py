"""Ingest: detect, extract, clean, chunk, embed."""
