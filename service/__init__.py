"""Use cases and the HTTP service around the TEN engine."""
