"""The web as a source: links fetched on the server (fetch.py), added to the library
(links.py), and the pages a Perplexity thread cites (sources.py)."""
