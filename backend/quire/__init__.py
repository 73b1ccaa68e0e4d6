"""Quire: a self-hosted research memory with page-exact citations."""

__version__ = "0.1.0"
