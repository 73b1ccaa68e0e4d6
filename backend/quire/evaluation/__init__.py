"""Measuring Quire: retrieval quality on BEIR datasets (beir.py), with the real searcher over a
scratch index that is built once and cached."""
