"""MkDocs hooks of the documentation site (`hooks:` in mkdocs.yml), run at build time only.

- The API reference page, `reference.md`, is rendered from the committed OpenAPI document
  (`openapi/openapi.json`) in the place of the file's own text (which says so): every
  operation and every webhook with its method, path, operationId, summary, description,
  security, parameters, request body and responses (each code), then every schema with its
  fields. Nothing is fetched: the page is made from the file, so it follows the contract
  the service serves.
- A page of docs/ may link a file of the repository outside docs/ (`../helm/README.md`): the
  link works where the Markdown is read in the repository, and `tests/unit/test_docs.py`
  checks it. The site holds only docs/, so an image linked so is copied into the site (under
  `repo/`) and any other file is named by its path in the repository instead of linked.
- Lists are read as GitHub reads them: Python-Markdown starts a list only after a blank line
  and nests one only four spaces in, where the pages (written for GitHub) start one right
  under a paragraph and nest it two spaces in. The files are left as they are.
"""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
OPENAPI = ROOT / "openapi" / "openapi.json"
REFERENCE = "reference.md"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
IMAGE = re.compile(r"\.(png|jpe?g|gif|svg|webp)$", re.IGNORECASE)
FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"(!?)\[([^\]\n]*)\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
LIST_ITEM = re.compile(r"^( *)(?:[-*+]|\d+[.)]) ")


# --- the API reference ---------------------------------------------------------------


def cell(text: str) -> str:
    """`text` fit for one cell of a Markdown table: one line, its pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def prose(text: str) -> str:
    """A description of the OpenAPI document as Markdown: a `<` outside code is text, not
    the start of an HTML tag (`Bearer <token>`)."""
    parts = re.split(r"(`[^`\n]*`)", text)
    return "".join(p if p.startswith("`") else p.replace("<", "&lt;") for p in parts)


def ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def schema_link(name: str) -> str:
    return f"[`{name}`](#schema-{name})"


def type_of(schema: dict[str, Any]) -> str:
    """A schema in a few words, a named schema as a link to its section."""
    if "$ref" in schema:
        return schema_link(ref_name(schema["$ref"]))
    for key, joiner in (("anyOf", " or "), ("oneOf", " or "), ("allOf", " and ")):
        if key in schema:
            return joiner.join(type_of(s) for s in schema[key])
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    if "enum" in schema:
        return "one of " + ", ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " or ".join(type_of({**schema, "type": k}) for k in kind)
    if kind == "array":
        return f"array of {type_of(schema.get('items', {}))}"
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return f"object of {type_of(schema['additionalProperties'])}"
    text = kind if isinstance(kind, str) else "any"
    if "format" in schema:
        text += f" ({schema['format']})"
    return text


def bounds(schema: dict[str, Any]) -> str:
    """The schema's bounds and default, in a few words."""
    words = []
    for key, word in (
        ("minimum", ">="),
        ("exclusiveMinimum", ">"),
        ("maximum", "<="),
        ("exclusiveMaximum", "<"),
        ("minLength", "length >="),
        ("maxLength", "length <="),
        ("minItems", "items >="),
        ("maxItems", "items <="),
    ):
        if key in schema:
            words.append(f"{word} {schema[key]}")
    if "default" in schema:
        words.append(f"default `{json.dumps(schema['default'])}`")
    return ", ".join(words)


def content_lines(content: dict[str, Any]) -> str:
    """The media types of a body, each with its schema."""
    return "; ".join(
        f"`{media}`: {type_of(body['schema'])}" if "schema" in body else f"`{media}`"
        for media, body in content.items()
    )


def render_operation(method: str, path: str, op: dict[str, Any]) -> list[str]:
    op_id = op["operationId"]
    title = op.get("summary") or op_id
    out = [f"### {cell(title)} {{#{op_id}}}", ""]
    out += [f"`{method.upper()} {path}` · operationId `{op_id}`", ""]
    if op.get("deprecated"):
        out += ["**Deprecated.**", ""]
    if op.get("description"):
        out += [prose(op["description"]), ""]
    if "security" in op:
        schemes = sorted({name for option in op["security"] for name in option})
        if schemes:
            out += ["Credentials: " + ", ".join(f"[`{s}`](#security)" for s in schemes), ""]
    params = op.get("parameters", [])
    if params:
        out += [
            "| parameter | in | required | type | description |",
            "|---|---|---|---|---|",
        ]
        for p in params:
            schema = p.get("schema", {})
            kind = type_of(schema)
            if extra := bounds(schema):
                kind += f"; {extra}"
            out.append(
                f"| `{p['name']}` | {p['in']} | {'yes' if p.get('required') else 'no'} "
                f"| {cell(kind)} | {cell(prose(p.get('description', '')))} |"
            )
        out.append("")
    body = op.get("requestBody")
    if body:
        required = "required" if body.get("required") else "optional"
        out += [f"Request body ({required}): {content_lines(body.get('content', {}))}", ""]
    out += ["| response | description | body |", "|---|---|---|"]
    for code, response in sorted(op.get("responses", {}).items()):
        description = prose(response.get("description", "")).strip()
        headers = response.get("headers") or {}
        if headers:
            if description and description[-1] not in ".;:!?)":
                description += "."
            description += " Headers: " + ", ".join(f"`{h}`" for h in headers) + "."
        out.append(
            f"| `{code}` | {cell(description)} "
            f"| {cell(content_lines(response.get('content', {})))} |"
        )
    out.append("")
    return out


def render_schema(name: str, schema: dict[str, Any]) -> list[str]:
    out = [f"### {name} {{#schema-{name}}}", ""]
    if schema.get("description"):
        out += [prose(schema["description"]), ""]
    properties = schema.get("properties")
    if not properties:
        out += [f"Type: {type_of(schema)}", ""]
        return out
    required = set(schema.get("required", []))
    out += ["| field | type | required | description |", "|---|---|---|---|"]
    for field, sub in properties.items():
        kind = type_of(sub)
        if extra := bounds(sub):
            kind += f"; {extra}"
        out.append(
            f"| `{field}` | {cell(kind)} | {'yes' if field in required else 'no'} "
            f"| {cell(prose(sub.get('description', '')))} |"
        )
    out.append("")
    return out


def render_reference(spec: dict[str, Any]) -> str:
    """The API reference page (Markdown) of an OpenAPI document."""
    info = spec.get("info", {})
    out = [
        "# API reference",
        "",
        f"{info.get('title', 'The API')}, version {info.get('version', '?')} (OpenAPI "
        f"{spec.get('openapi', '?')}). This page is generated when the site is built, from "
        "the committed OpenAPI document `openapi/openapi.json`, which the service also serves "
        "at `/schema/openapi.json` (and as Swagger UI at `/schema/swagger`). The same "
        "contract by example: [the HTTP API](api.md).",
        "",
    ]
    if info.get("description"):
        out += [prose(info["description"]), ""]
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, item in spec.get("paths", {}).items():
        for method in METHODS:
            if method in item:
                op = item[method]
                by_tag.setdefault((op.get("tags") or ["other"])[0], []).append((method, path, op))
    out += ["## Operations", ""]
    for tag, ops in by_tag.items():
        out += [f"## {tag.capitalize()} {{#tag-{tag}}}", ""]
        for method, path, op in ops:
            out += render_operation(method, path, op)
    webhooks = spec.get("webhooks", {})
    if webhooks:
        out += [
            "## Webhooks",
            "",
            "What the service sends to the platform's endpoints (`TEN_WEBHOOK_URLS`), each "
            "as a POST to every endpoint.",
            "",
        ]
        for name, item in webhooks.items():
            for method in METHODS:
                if method in item:
                    out += render_operation(method, name, item[method])
    components = spec.get("components", {})
    schemes = components.get("securitySchemes", {})
    if schemes:
        out += [
            "## Security {#security}",
            "",
            "| credential | kind | description |",
            "|---|---|---|",
        ]
        for name, scheme in schemes.items():
            kind = scheme.get("type", "")
            if kind == "apiKey":
                kind = f"API key in the {scheme.get('in')} `{scheme.get('name')}`"
            elif kind == "http":
                kind = f"HTTP {scheme.get('scheme')}"
            out.append(
                f"| `{name}` | {cell(kind)} | {cell(prose(scheme.get('description', '')))} |"
            )
        out.append("")
    schemas = components.get("schemas", {})
    if schemas:
        out += ["## Schemas", ""]
        for name, schema in sorted(schemas.items()):
            out += render_schema(name, schema)
    return "\n".join(out)


def reference() -> str:
    """The API reference page of the committed OpenAPI document."""
    return render_reference(json.loads(OPENAPI.read_text(encoding="utf-8")))


# --- the hooks -----------------------------------------------------------------------


def links(markdown: str) -> list[re.Match[str]]:
    """The Markdown links of the text outside code fences and code spans (a code span in a
    link's text is part of the link), as matches on `markdown` itself."""
    masked = FENCE.sub(lambda m: "\0" * len(m.group(0)), markdown)
    masked = CODE_SPAN.sub(lambda m: "\0" * len(m.group(0)), masked)
    return [
        match
        for found in LINK.finditer(masked)
        if (match := LINK.match(markdown, found.start(), found.end())) is not None
    ]


def repository_file(page_uri: str, target: str, docs_dir: Path) -> str | None:
    """The path in the repository of a relative link's file outside docs/, else None."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith(("#", "/")):
        return None
    path = target.partition("#")[0]
    if not path:
        return None
    file = (docs_dir / posixpath.dirname(page_uri) / path).resolve()
    if file.is_relative_to(docs_dir) or not file.is_relative_to(ROOT) or not file.is_file():
        return None
    return file.relative_to(ROOT).as_posix()


def on_files(files: Files, config: Any) -> Files:
    """Adds the API reference page and the images that pages link outside docs/."""
    if files.get_file_from_path(REFERENCE) is None:
        files.append(File.generated(config, REFERENCE, content=reference()))
    docs_dir = Path(config["docs_dir"]).resolve()
    for page in list(files.documentation_pages()):
        if page.abs_src_path is None:
            continue
        for match in links(Path(page.abs_src_path).read_text(encoding="utf-8")):
            bang, _, target = match.groups()
            path = repository_file(page.src_uri, target, docs_dir)
            if (
                bang
                and path
                and IMAGE.search(path)
                and not files.get_file_from_path(f"repo/{path}")
            ):
                files.append(File.generated(config, f"repo/{path}", abs_src_path=str(ROOT / path)))
    return files


def github_lists(markdown: str) -> str:
    """The Markdown with a blank line before every list that follows a paragraph, and the
    items nested two spaces in nested four (outside code fences)."""
    out: list[str] = []
    in_list = in_fence = False
    for text in markdown.split("\n"):
        line = text
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        item = None if in_fence else LIST_ITEM.match(line)
        after_blank = not out or not out[-1].strip()
        if item and not item.group(1):
            if not after_blank and not in_list:
                out.append("")
            in_list = True
        elif item and in_list and len(item.group(1)) < 4:
            line = "    " + line.lstrip()
        elif not in_fence and line.strip() and not line.startswith(" ") and after_blank:
            in_list = False
        out.append(line)
    return "\n".join(out)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """Relinks what a page links outside docs/: an image to its copy in the site, any
    other file to its path in the repository."""
    page_uri = page.file.src_uri
    if page_uri == REFERENCE:
        return reference()
    docs_dir = Path(config["docs_dir"]).resolve()
    here = posixpath.dirname(page_uri) or "."
    out, last = [], 0
    for match in links(markdown):
        bang, text, target = match.groups()
        path = repository_file(page_uri, target, docs_dir)
        if path is None:
            new = match.group(0)
        elif bang and IMAGE.search(path):
            new = f"![{text}]({posixpath.relpath(f'repo/{path}', here)})"
        elif path in text:
            new = text
        else:
            new = f"{text} (`{path}` in the repository)"
        out += [markdown[last : match.start()], new]
        last = match.end()
    return github_lists("".join([*out, markdown[last:]]))
