# syntax=docker/dockerfile:1.7
# The TEN game service image.
#
#   docker build -t ten:dev .
#   docker run --rm -p 8000:8000 --read-only --tmpfs /tmp ten:dev          # embedded store
#   docker run --rm -p 8000:8000 --read-only --tmpfs /tmp \
#     -e TEN_REDIS_URL=redis://redis:6379/0 -e WEB_CONCURRENCY=4 ten:dev    # on Redis
#
# Three stages: `build` installs the pinned dependencies into a virtualenv (with a compiler at
# hand for any dependency without a wheel); `docs` builds the documentation site (MkDocs,
# docs/requirements.txt) that the service serves at /static/site/index.html; the final stage
# copies only that virtualenv, the code and the built site onto a slim Python, with no
# compiler, no MkDocs, no pip cache, and a numeric non-root user.
# The Kubernetes chart is in helm/ (helm/README.md).

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential \
 && rm -rf /var/lib/apt/lists/*
RUN python -m venv /opt/venv
WORKDIR /src
# the runtime dependencies exactly as pinned in pyproject.toml, with the `otel` extra so that
# tracing is a setting, not another image (not the dev tools); the
# code itself is not pip-installed: it runs from /app, next to alembic.ini and migrations/
COPY pyproject.toml ./
RUN python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; print('\n'.join(p['dependencies'] + p['optional-dependencies']['otel']))" > requirements.txt \
 && /opt/venv/bin/pip install --no-compile -r requirements.txt
COPY alembic.ini ./app/
COPY domain ./app/domain
COPY service ./app/service
COPY infra ./app/infra
COPY migrations ./app/migrations
# the modules setup.py compiles (COMPILED: domain/game/scoring.py) made C extensions by mypyc, next
# to their sources as `pip install -e .` makes them, with the build requirements
# pyproject.toml pins, in a virtualenv of this stage only
COPY setup.py ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['build-system']['requires']))" > build-requirements.txt \
 && python -m venv /opt/build \
 && /opt/build/bin/pip install --no-compile -r build-requirements.txt \
 && cd app \
 && /opt/build/bin/mypyc --config-file ../pyproject.toml $(python -c "import ast; print(' '.join(next(ast.literal_eval(n.value) for n in ast.parse(open('../setup.py').read()).body if isinstance(n, ast.Assign) and n.targets[0].id == 'COMPILED')))") \
 && rm -rf build .mypy_cache
# bytecode compiled now: the running container cannot write it (read-only root filesystem)
RUN /opt/venv/bin/python -m compileall -q /opt/venv /src/app

# The documentation site (mkdocs.yml): docs/ and the files its pages link outside docs/ (the
# API reference is rendered from openapi/openapi.json, an image linked from a page is copied
# into the site, another file is named by its path: docs/hooks.py), built strictly (a warning
# fails the image's build) into /site. Only /site leaves this stage.
FROM ${PYTHON_IMAGE} AS docs
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    NO_MKDOCS_2_WARNING=1
WORKDIR /src
COPY docs/requirements.txt ./docs/
RUN python -m venv /opt/docs \
 && /opt/docs/bin/pip install --no-compile -r docs/requirements.txt
COPY mkdocs.yml ./
COPY docs ./docs
COPY openapi/openapi.json openapi/game-record.schema.json ./openapi/
COPY CHANGELOG.md ./
COPY bench/README.md bench/HISTORY.md ./bench/
COPY helm/README.md ./helm/
COPY clients/ts/README.md ./clients/ts/
COPY clients/web/screenshot-table.png ./clients/web/
RUN /opt/docs/bin/mkdocs build --strict --site-dir /site

FROM ${PYTHON_IMAGE} AS runtime
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="ten-service" \
      org.opencontainers.image.description="TEN, the push-your-luck auction card game, as a REST microservice" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="UNLICENSED" \
      org.opencontainers.image.base.name="${PYTHON_IMAGE}"
# tini as PID 1: forwards SIGTERM to the server and reaps any orphan
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/venv /opt/venv
COPY --from=build /src/app /app
# where the service serves it from (service/static/site, as scripts/setup builds it)
COPY --from=docs /site /app/service/static/site
# the server's launcher: WEB_CONCURRENCY uvicorn workers (default 2), but one on the embedded
# store (no TEN_REDIS_URL), whose games live in one process's memory. `exec`, so the server
# gets the signals. Other uvicorn options come from UVICORN_* variables (e.g.
# UVICORN_TIMEOUT_GRACEFUL_SHUTDOWN, UVICORN_LOG_LEVEL) or arguments after `ten-serve`;
# UVICORN_HTTP is uvicorn's httptools protocol with header and body timeouts and size limits
# (infra/http_protocol.py, TEN_HEADER_TIMEOUT, TEN_BODY_TIMEOUT...), UVICORN_LIMIT_CONCURRENCY
# answers 503 past 512 requests the app is working on per worker (idle and slow connections
# do not count; the README's "Bounded connections"). scripts/run defaults to the same two.
COPY --chmod=0555 <<'EOF' /usr/local/bin/ten-serve
#!/bin/sh
set -eu
workers="${WEB_CONCURRENCY:-2}"
# Prometheus multiprocess files of an earlier run (a restarted container keeps /tmp) would
# count twice: start from an empty directory
if [ -n "${PROMETHEUS_MULTIPROC_DIR:-}" ]; then
  rm -rf "$PROMETHEUS_MULTIPROC_DIR" && mkdir -p "$PROMETHEUS_MULTIPROC_DIR"
fi
if [ -z "${TEN_REDIS_URL:-}" ] && [ "$workers" != "1" ]; then
  echo "ten-serve: TEN_REDIS_URL is unset: the embedded store lives in one process, so 1 worker (not $workers)" >&2
  workers=1
fi
exec uvicorn service.app:app --host "${HOST:-0.0.0.0}" --port "${PORT:-8000}" --workers "$workers" "$@"
EOF
# /data: the working directory, so the embedded default's SQLite archive
# (./ten-archive.sqlite3) lands on a volume; mount one there (an emptyDir in the chart) or
# set TEN_DATABASE_URL. Everything else the process writes goes to /tmp.
RUN mkdir -p /data && chown 10001:10001 /data
VOLUME ["/data", "/tmp"]
# HOME=/tmp: UID 10001 has no passwd entry; whatever a library caches under ~ goes to /tmp
ENV PATH=/opt/venv/bin:$PATH \
    HOME=/tmp \
    PYTHONPATH=/app \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    WEB_CONCURRENCY=2 \
    UVICORN_TIMEOUT_GRACEFUL_SHUTDOWN=25 \
    UVICORN_HTTP=infra.http_protocol:BoundedHttpToolsProtocol \
    UVICORN_LIMIT_CONCURRENCY=512 \
    UVICORN_ACCESS_LOG=false \
    TEN_LOG_FORMAT=json \
    PROMETHEUS_MULTIPROC_DIR=/tmp/prometheus
WORKDIR /data
USER 10001:10001
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/health' % os.environ.get('PORT', '8000'), timeout=2)"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["ten-serve"]
