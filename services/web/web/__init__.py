"""The public board site, served as pages and built only on the public /v1 API."""
