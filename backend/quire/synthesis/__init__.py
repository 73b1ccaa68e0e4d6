"""Answers: LLM routing, map-reduce over sources, verification, extractive mode."""
