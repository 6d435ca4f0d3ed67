"""Settings, read once from `TEN_*` environment variables at the composition root."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

import msgspec

_RATE = re.compile(r"^\s*(\d+)\s*/\s*(second|minute|hour|day)\s*$")
_ORIGIN = re.compile(r"^https?://[^/\s?#]+$")
# an HS256 secret shorter than the hash (32 bytes) is below what RFC 7518 3.2 requires
JWT_SECRET_MIN_BYTES = 32
MAX_JWT_LEEWAY = 300  # seconds: clock skew, not a grace period for expired tokens


def _otlp_endpoint_set(env: Mapping[str, str]) -> bool:
    """OpenTelemetry's own variables name an exporter endpoint: tracing is wanted."""
    names = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    return any((env.get(name) or "").strip() for name in names)


class _Env:
    """`TEN_<name>` variables read and checked (blank counts as unset)."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env

    def get(self, name: str) -> str | None:
        value = self.env.get(f"TEN_{name}")
        return value.strip() if value and value.strip() else None

    def flag(self, name: str, default: bool) -> bool:
        value = self.get(name)
        if value is None:
            return default
        if value.lower() in ("1", "true", "yes", "on"):
            return True
        if value.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"TEN_{name} must be true or false, not {value!r}")

    def number(self, name: str, default, kind=int):
        value = self.get(name)
        if value is None:
            return default
        parsed = kind(value)
        if parsed <= 0:
            raise ValueError(f"TEN_{name} must be positive")
        return parsed

    def count(self, name: str, default: int) -> int:
        value = self.get(name)
        if value is None:
            return default
        if not value.isdigit():
            raise ValueError(f"TEN_{name} must be a whole number, 0 or more, not {value!r}")
        return int(value)

    def items(self, name: str) -> tuple[str, ...]:
        """A comma-separated list; blank items dropped, duplicates kept once, in order."""
        value = self.get(name)
        if value is None:
            return ()
        return tuple(dict.fromkeys(item.strip() for item in value.split(",") if item.strip()))

    def choice(self, name: str, allowed: tuple[str, ...], default: str, upper: bool = False) -> str:
        value = self.get(name)
        if value is None:
            return default
        value = value.upper() if upper else value.lower()
        if value not in allowed:
            raise ValueError(f"TEN_{name} must be one of {', '.join(allowed)}, not {value!r}")
        return value


class HttpLimits(msgspec.Struct, frozen=True, kw_only=True):
    """Bounds on how a request arrives (its head, then its body), kept by the serving process's
    HTTP protocol (infra/http_protocol.py) before the app sees the request."""

    header_timeout: float = 10.0  # TEN_HEADER_TIMEOUT: seconds from connecting (or a request's
    # first byte on a kept-alive connection) to the end of its headers
    # TEN_BODY_TIMEOUT: seconds from the end of the headers to the end of the body. A deadline
    # rather than a minimum rate: bodies are small (TEN_MAX_BODY_BYTES), so the whole body
    # fits in one bound with a single knob, and a trickle of any rate is cut at it
    body_timeout: float = 15.0
    max_header_bytes: int = 32 * 1024  # TEN_MAX_HEADER_BYTES: request line + headers
    max_headers: int = 100  # TEN_MAX_HEADERS: header lines in one request

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> HttpLimits:
        env = _Env(os.environ if environ is None else environ)
        defaults = cls()
        return cls(
            header_timeout=env.number("HEADER_TIMEOUT", defaults.header_timeout, float),
            body_timeout=env.number("BODY_TIMEOUT", defaults.body_timeout, float),
            max_header_bytes=env.number("MAX_HEADER_BYTES", defaults.max_header_bytes),
            max_headers=env.number("MAX_HEADERS", defaults.max_headers),
        )


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    redis_url: str | None = None  # TEN_REDIS_URL; unset: the embedded in-process store
    redis_cluster: bool = False  # TEN_REDIS_CLUSTER: the URL names a Redis Cluster node
    # TEN_REDIS_SENTINELS: host:port of Redis Sentinels, comma-separated: the store is on the
    # primary they name (TEN_REDIS_SENTINEL_MASTER), found again after a failover; the URL
    # then gives only the database and credentials (unset: database 0)
    redis_sentinels: tuple[tuple[str, int], ...] = ()
    redis_sentinel_master: str = "mymaster"  # TEN_REDIS_SENTINEL_MASTER
    # TEN_REDIS_WAIT_REPLICAS: a write (an action, a join, a new game) is acknowledged only
    # once this many replicas have it (WAIT), else 503; 0: once the primary has it
    redis_wait_replicas: int = 0
    redis_wait_timeout: float = 1.0  # TEN_REDIS_WAIT_TIMEOUT: seconds that WAIT may take
    allow_custom_deck: bool = True  # TEN_ALLOW_CUSTOM_DECK: accept `deck` when creating a game
    finished_ttl: int = 24 * 3600  # TEN_FINISHED_TTL: seconds a finished game stays readable
    idle_ttl: int = 7 * 24 * 3600  # TEN_IDLE_TTL: seconds an untouched live game is kept
    rate_limit: tuple[int, str] | None = None  # TEN_RATE_LIMIT, e.g. "600/minute"; unset: none
    max_body_bytes: int = 64 * 1024  # TEN_MAX_BODY_BYTES: larger bodies get 413
    sse_keepalive: float = 15.0  # TEN_SSE_KEEPALIVE: seconds between keep-alive comments
    # event streams (infra.watchers): past a cap, a stream is refused before it starts
    sse_max_streams: int = 10_000  # TEN_SSE_MAX_STREAMS: open streams per process (then 503)
    sse_max_per_client: int = 100  # TEN_SSE_MAX_PER_CLIENT: per client address (429); 0: none
    # TEN_MAX_OPEN_TABLES: open tables one caller (a player, or an anonymous client's
    # address) hosts at once, then 429 too_many_open_tables; 0: no quota. The platform: none.
    max_open_tables: int = 20
    # TEN_MAX_OPEN_TOURNAMENTS: tournaments one organiser (a player) has not seen end, then
    # 429 too_many_open_tournaments; 0: no quota. The platform: none.
    max_open_tournaments: int = 5
    # TEN_MAX_PENDING_REVIEWS: review requests one caller has waiting at once (then 429);
    # TEN_REVIEW_QUEUE: waiting in all, every caller together (then 429); 0: no bound
    max_pending_reviews: int = 3
    review_queue: int = 200
    sse_buffer: int = 256  # TEN_SSE_BUFFER: events a stream may fall behind before it is dropped
    act_retries: int = 20  # TEN_ACT_RETRIES: optimistic-concurrency retries per action
    # the steps in which bots move (service.games.bot_work): computed by this many worker processes
    # per serving process (TEN_BOT_WORKERS; 0: in a thread of the serving process), at most
    # TEN_BOT_QUEUE of them waiting or running at once (then 503 bots_busy)
    bot_workers: int = 1
    bot_queue: int = 64
    # TEN_JOB_WORKERS: this process runs the queues' workers (the archive, the relay's
    # leftovers, the webhooks, the reviews); false (Redis only): `python -m service.cli work`
    # processes run them, and the serving processes only queue their jobs
    job_workers: bool = True
    database_url: str | None = None  # TEN_DATABASE_URL; unset: a SQLite file (embedded default)
    migrate_on_start: bool | None = None  # TEN_MIGRATE_ON_START; unset: only on the default SQLite
    archive_interval: float = (
        1.0  # TEN_ARCHIVE_INTERVAL: seconds between two looks at the archive queue
    )
    metrics: bool = True  # TEN_METRICS: Prometheus metrics at GET /metrics
    log_format: str = "auto"  # TEN_LOG_FORMAT: json | text | auto (text on a terminal, else JSON)
    log_level: str = "INFO"  # TEN_LOG_LEVEL
    access_log: bool = False  # TEN_ACCESS_LOG: one log line per request
    tracing: bool = False  # TEN_OTEL_ENABLED (or OTEL_EXPORTER_OTLP_ENDPOINT set): OpenTelemetry
    gc_threshold: int = 10_000  # TEN_GC_THRESHOLD: the serving process's gen-0 GC threshold; 0: off
    # who is calling (service.entrypoints.api.identity); none of these set: open, identities unverified
    api_keys: tuple[str, ...] = ()  # TEN_API_KEYS: the platform's keys, comma-separated
    jwt_secret: str | None = None  # TEN_JWT_SECRET: HS256 key of player JWTs
    jwt_public_key: str | None = None  # TEN_JWT_PUBLIC_KEY: PEM (RSA, EC or Ed25519/Ed448)
    jwt_jwks_url: str | None = None  # TEN_JWT_JWKS_URL: the platform's JWKS (http/https)
    jwt_issuer: str | None = None  # TEN_JWT_ISSUER: the `iss` player JWTs must carry
    jwt_audience: str | None = None  # TEN_JWT_AUDIENCE: the `aud` player JWTs must carry
    jwt_leeway: int = 30  # TEN_JWT_LEEWAY: seconds of clock skew allowed on exp/nbf/iat
    cors_origins: tuple[str, ...] = ()  # TEN_CORS_ORIGINS: origins (or `*`); unset: no CORS
    # clocks (service.reactions.deadlines): every replica polls the games whose deadline has come
    deadline_poll: float = 0.2  # TEN_DEADLINE_POLL: seconds between two looks at due games
    deadline_lease: float = 15.0  # TEN_DEADLINE_LEASE: seconds a replica holds a claimed game
    # webhooks (service.reactions.webhooks): the platform's endpoints, signed per Standard Webhooks
    webhook_urls: tuple[str, ...] = ()  # TEN_WEBHOOK_URLS: comma-separated http(s) URLs
    webhook_secret: str | None = None  # TEN_WEBHOOK_SECRET: `whsec_` + base64 (24-64 bytes)
    webhook_timeout: float = 10.0  # TEN_WEBHOOK_TIMEOUT: seconds one delivery may take
    webhook_max_backoff: float = 600.0  # TEN_WEBHOOK_MAX_BACKOFF: the longest wait between tries
    webhook_retention: int = 3 * 24 * 3600  # TEN_WEBHOOK_RETENTION: seconds a message is retried

    def __post_init__(self) -> None:
        check_redis(self)
        check_identity(self)
        check_cors(self.cors_origins)
        check_webhooks(self)

    @property
    def jwt_configured(self) -> bool:
        return any((self.jwt_secret, self.jwt_public_key, self.jwt_jwks_url))

    @property
    def run_migrations(self) -> bool:
        if self.migrate_on_start is not None:
            return self.migrate_on_start
        return self.database_url is None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Every setting from its variable: long because it is one line per setting."""
        env = _Env(os.environ if environ is None else environ)
        get, flag, number, count, choice = env.get, env.flag, env.number, env.count, env.choice
        defaults = cls()
        sentinels = tuple(_address(item, 26379) for item in env.items("REDIS_SENTINELS"))
        master = get("REDIS_SENTINEL_MASTER") or defaults.redis_sentinel_master
        return cls(
            # through sentinels, the URL's host is not used: the primary's name stands there
            redis_url=get("REDIS_URL") or (f"redis://{master}/0" if sentinels else None),
            redis_cluster=flag("REDIS_CLUSTER", False),
            redis_sentinels=sentinels,
            redis_sentinel_master=master,
            redis_wait_replicas=count("REDIS_WAIT_REPLICAS", defaults.redis_wait_replicas),
            redis_wait_timeout=number("REDIS_WAIT_TIMEOUT", defaults.redis_wait_timeout, float),
            allow_custom_deck=flag("ALLOW_CUSTOM_DECK", True),
            finished_ttl=number("FINISHED_TTL", defaults.finished_ttl),
            idle_ttl=number("IDLE_TTL", defaults.idle_ttl),
            rate_limit=_rate_limit(get("RATE_LIMIT")),
            max_body_bytes=number("MAX_BODY_BYTES", defaults.max_body_bytes),
            sse_keepalive=number("SSE_KEEPALIVE", defaults.sse_keepalive, float),
            sse_max_streams=number("SSE_MAX_STREAMS", defaults.sse_max_streams),
            sse_max_per_client=count("SSE_MAX_PER_CLIENT", defaults.sse_max_per_client),
            max_open_tables=count("MAX_OPEN_TABLES", defaults.max_open_tables),
            max_open_tournaments=count("MAX_OPEN_TOURNAMENTS", defaults.max_open_tournaments),
            max_pending_reviews=count("MAX_PENDING_REVIEWS", defaults.max_pending_reviews),
            review_queue=count("REVIEW_QUEUE", defaults.review_queue),
            sse_buffer=number("SSE_BUFFER", defaults.sse_buffer),
            act_retries=number("ACT_RETRIES", defaults.act_retries),
            bot_workers=count("BOT_WORKERS", defaults.bot_workers),
            bot_queue=number("BOT_QUEUE", defaults.bot_queue),
            job_workers=flag("JOB_WORKERS", defaults.job_workers),
            database_url=get("DATABASE_URL"),
            migrate_on_start=None
            if get("MIGRATE_ON_START") is None
            else flag("MIGRATE_ON_START", False),
            archive_interval=number("ARCHIVE_INTERVAL", defaults.archive_interval, float),
            metrics=flag("METRICS", True),
            log_format=choice("LOG_FORMAT", ("auto", "json", "text"), "auto"),
            log_level=choice(
                "LOG_LEVEL", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"), "INFO", upper=True
            ),
            access_log=flag("ACCESS_LOG", False),
            tracing=flag("OTEL_ENABLED", _otlp_endpoint_set(env.env)),
            gc_threshold=count("GC_THRESHOLD", defaults.gc_threshold),
            api_keys=env.items("API_KEYS"),
            # a PEM given on one line with literal \n (as some secret stores hand it over)
            jwt_public_key=_pem(get("JWT_PUBLIC_KEY")),
            jwt_secret=get("JWT_SECRET"),
            jwt_jwks_url=get("JWT_JWKS_URL"),
            jwt_issuer=get("JWT_ISSUER"),
            jwt_audience=get("JWT_AUDIENCE"),
            jwt_leeway=count("JWT_LEEWAY", defaults.jwt_leeway),
            cors_origins=env.items("CORS_ORIGINS"),
            deadline_poll=number("DEADLINE_POLL", defaults.deadline_poll, float),
            deadline_lease=number("DEADLINE_LEASE", defaults.deadline_lease, float),
            webhook_urls=env.items("WEBHOOK_URLS"),
            webhook_secret=get("WEBHOOK_SECRET"),
            webhook_timeout=number("WEBHOOK_TIMEOUT", defaults.webhook_timeout, float),
            webhook_max_backoff=number("WEBHOOK_MAX_BACKOFF", defaults.webhook_max_backoff, float),
            webhook_retention=number("WEBHOOK_RETENTION", defaults.webhook_retention),
        )


def _rate_limit(rate: str | None) -> tuple[int, str] | None:
    if rate is None:
        return None
    match = _RATE.match(rate)
    if not match:
        raise ValueError(f"TEN_RATE_LIMIT must look like '600/minute', not {rate!r}")
    return int(match.group(1)), match.group(2)


def _address(item: str, default_port: int) -> tuple[str, int]:
    """`host:port` (or `host`, or `[v6]:port`) of TEN_REDIS_SENTINELS."""
    host, colon, port = item.rpartition(":")
    if not colon or "]" in port:
        host, port = item, str(default_port)
    host = host.removeprefix("[").removesuffix("]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"TEN_REDIS_SENTINELS: {item!r} is not host:port")
    return host, int(port)


def check_redis(settings: Settings) -> None:
    if settings.redis_sentinels and settings.redis_cluster:
        raise ValueError("set TEN_REDIS_SENTINELS or TEN_REDIS_CLUSTER, not both")
    if settings.redis_wait_replicas and settings.redis_cluster:
        raise ValueError(
            "TEN_REDIS_WAIT_REPLICAS is not supported on a Redis Cluster (a save's WAIT would "
            "have to reach the node of the game's slot)"
        )
    if settings.redis_wait_replicas and settings.redis_url is None:
        raise ValueError("TEN_REDIS_WAIT_REPLICAS needs Redis (TEN_REDIS_URL or _SENTINELS)")


def _pem(value: str | None) -> str | None:
    if value is None or "\n" in value:
        return value
    return value.replace("\\n", "\n")


def check_identity(settings: Settings) -> None:
    """Identity settings that cannot work are refused when the service starts (the values
    themselves are never in the message). The PEM key itself is parsed by service.entrypoints.api.identity."""
    if any(not key.isprintable() or " " in key for key in settings.api_keys):
        raise ValueError("TEN_API_KEYS: a key holds a space or an unprintable character")
    if any(len(key) < 16 for key in settings.api_keys):
        raise ValueError("TEN_API_KEYS: every key must be at least 16 characters")
    if settings.jwt_leeway > MAX_JWT_LEEWAY:
        raise ValueError(f"TEN_JWT_LEEWAY must be at most {MAX_JWT_LEEWAY} seconds")
    sources = [
        name
        for name, value in (
            ("TEN_JWT_SECRET", settings.jwt_secret),
            ("TEN_JWT_PUBLIC_KEY", settings.jwt_public_key),
            ("TEN_JWT_JWKS_URL", settings.jwt_jwks_url),
        )
        if value
    ]
    if len(sources) > 1:
        raise ValueError(f"set only one of {', '.join(sources)}: each names the key of player JWTs")
    if not sources:
        if settings.jwt_issuer or settings.jwt_audience:
            raise ValueError("TEN_JWT_ISSUER/TEN_JWT_AUDIENCE are set but no JWT key is")
        return
    if not settings.jwt_issuer or not settings.jwt_audience:
        raise ValueError(
            f"{sources[0]} needs TEN_JWT_ISSUER and TEN_JWT_AUDIENCE: a JWT is accepted only "
            "from its issuer and for this service"
        )
    if settings.jwt_secret and len(settings.jwt_secret.encode()) < JWT_SECRET_MIN_BYTES:
        raise ValueError(f"TEN_JWT_SECRET must be at least {JWT_SECRET_MIN_BYTES} bytes")
    if settings.jwt_jwks_url and not settings.jwt_jwks_url.lower().startswith(
        ("https://", "http://")
    ):
        raise ValueError("TEN_JWT_JWKS_URL must be an http:// or https:// URL")


def check_cors(origins: tuple[str, ...]) -> None:
    if "*" in origins and len(origins) > 1:
        raise ValueError("TEN_CORS_ORIGINS: `*` allows every origin; list no others with it")
    wrong = [o for o in origins if o != "*" and not _ORIGIN.match(o)]
    if wrong:
        raise ValueError(
            f"TEN_CORS_ORIGINS: {wrong[0]!r} is not an origin (scheme://host[:port], no path)"
        )


def check_webhooks(settings: Settings) -> None:
    """Webhook endpoints need a signing secret (and a secret needs somewhere to send)."""
    wrong = [u for u in settings.webhook_urls if not u.lower().startswith(("https://", "http://"))]
    if wrong:
        raise ValueError(f"TEN_WEBHOOK_URLS: {wrong[0]!r} is not an http:// or https:// URL")
    if settings.webhook_urls and not settings.webhook_secret:
        raise ValueError("TEN_WEBHOOK_URLS is set: TEN_WEBHOOK_SECRET must be too (whsec_...)")
    if settings.webhook_secret and not settings.webhook_urls:
        raise ValueError("TEN_WEBHOOK_SECRET is set but TEN_WEBHOOK_URLS is not")
