"""Adapters behind the service ports: game stores, the SQL archive, event fan-out."""
