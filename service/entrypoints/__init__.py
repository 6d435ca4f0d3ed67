"""The ways in: the HTTP API with its event streams (`api`), the command line (`cli`), the
simulator and the OpenAPI export. They call the application; `service.app` composes it."""
