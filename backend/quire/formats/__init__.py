"""File formats: each module reads one kind of file into pages (formats/types.py's
``Extracted``); detect.py tells the kind from the bytes, extract.py dispatches."""
