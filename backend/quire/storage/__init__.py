"""SQLite storage: the main DB (source of truth) and the attached vector file."""
