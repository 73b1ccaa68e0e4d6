"""Office files: Word and OpenDocument text, slides, spreadsheets (docs/sources/office.md)."""
