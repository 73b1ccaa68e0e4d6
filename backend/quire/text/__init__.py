"""Text analysis shared by ingest and retrieval: scripts, language, segmentation of
unspaced scripts, stopwords, cleaning and splitting."""
