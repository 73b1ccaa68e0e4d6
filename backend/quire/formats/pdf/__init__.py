"""PDF: the text layer (text.py, laid out by layout.py), the outline and page labels
(structure.py), headings told from fonts (headings.py), OCR of the pages that need it (ocr.py),
put together by reader.py."""
