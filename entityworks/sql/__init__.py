"""SQL databases: the Store and everything it runs on (tables, codecs, filters, dialects)."""
