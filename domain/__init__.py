"""The TEN engine: a pure functional core (standard library and msgspec only)."""
