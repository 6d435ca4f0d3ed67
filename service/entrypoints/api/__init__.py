"""The HTTP adapter: Litestar controllers, API schemas, error mapping, OpenAPI."""
