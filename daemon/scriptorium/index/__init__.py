"""Index generations on disk and the in-memory catalog that serves them."""
