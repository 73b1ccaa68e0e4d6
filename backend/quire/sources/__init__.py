"""Where documents come from besides uploads: watched folders, Zotero, ChatGPT and Claude
exports, Perplexity; each hands files or records to ingest."""
