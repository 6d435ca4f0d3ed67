"""The app the server runs: `uvicorn service.app:app` (scripts/run, the image)."""

from service.entrypoints.api.app import create_app

app = create_app(serving=True)
