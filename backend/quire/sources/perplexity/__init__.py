"""Perplexity.ai history sync: login, incremental export, markdown rendering, library ingest."""
