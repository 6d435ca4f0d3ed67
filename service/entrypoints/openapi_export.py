"""Write the service's OpenAPI document to `openapi/` (committed, reviewed like code).

    python -m service.entrypoints.openapi_export           # (re)write openapi/openapi.json and .yaml,
                                                           # and openapi/game-record.schema.json
    python -m service.entrypoints.openapi_export --check   # exit 1 if the committed files are stale

The document is the one `/schema/openapi.json` serves: the app built with the default
settings, finished by `service.entrypoints.api.openapi.finish_openapi`; beside it, the game
record's JSON Schema (`service.history.records.schema`, served at /v1/schemas/game-record).
Keys are sorted so diffs show only real changes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
OUT_DIR = ROOT / "openapi"
RECORD_SCHEMA = OUT_DIR / "game-record.schema.json"
EXPORT_COMMAND = "python -m service.entrypoints.openapi_export"


def build_document() -> dict[str, Any]:
    """The final OpenAPI document of `create_app(Settings())`, as served."""
    from service.core.settings import Settings  # noqa: PLC0415
    from service.entrypoints.api.app import create_app  # noqa: PLC0415
    from service.entrypoints.api.openapi import served_document  # noqa: PLC0415 - heavy, only here

    app = create_app(Settings())  # the defaults: the embedded store, nothing to connect to
    schema = served_document(app)
    # as the client gets it: JSON types only (msgspec's defaults hold tuples, for example)
    return json.loads(json.dumps(schema))


def render_json(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render_yaml(document: dict[str, Any]) -> str:
    import yaml  # noqa: PLC0415 - a dev dependency, needed only to export

    return yaml.safe_dump(document, sort_keys=True, allow_unicode=True, width=100)


def rendered(document: dict[str, Any] | None = None) -> dict[Path, str]:
    from service.history.records import schema  # noqa: PLC0415

    document = build_document() if document is None else document
    return {
        OUT_DIR / "openapi.json": render_json(document),
        OUT_DIR / "openapi.yaml": render_yaml(document),
        RECORD_SCHEMA: render_json(schema()),
    }


def stale_files(files: dict[Path, str]) -> list[Path]:
    return [
        path
        for path, text in files.items()
        if not path.exists() or path.read_text(encoding="utf-8") != text
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=EXPORT_COMMAND, description=__doc__.split("\n")[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 if the committed files differ from the code",
    )
    args = parser.parse_args(argv)
    files = rendered()
    stale = stale_files(files)
    if args.check:
        if stale:
            names = ", ".join(str(p.relative_to(ROOT)) for p in stale)
            print(
                f"OpenAPI out of date: {names} not what the code serves. Run `{EXPORT_COMMAND}` "
                "and commit the result.",
                file=sys.stderr,
            )
            return 1
        print("OpenAPI files are up to date.")
        return 0
    OUT_DIR.mkdir(exist_ok=True)
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
