"""Settings, read once from `TEN_*` environment variables at the composition root, in one
group per concern (the store, the archive, identity, webhooks, games, quotas, HTTP, event
streams, the process's runtime, observability). Each group reads its own variables and
refuses a combination that cannot work when the service starts; a reader takes the group
it needs. The variables' names are the operators' (docs/configuration.md, helm/)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal, cast, get_args

import msgspec

from service.core.environment import Environment

# the places a ranked game rates its players by: its results' ranks, or the luck-adjusted
# ranks of its review (`service.history.archiving`)
RatingsBy = Literal["results", "luck_adjusted"]
RATINGS_BY: tuple[RatingsBy, ...] = get_args(RatingsBy)

_RATE = re.compile(r"^\s*(\d+)\s*/\s*(second|minute|hour|day)\s*$")
_ORIGIN = re.compile(r"^https?://[^/\s?#]+$")
# an HS256 secret shorter than the hash (32 bytes) is below what RFC 7518 3.2 requires
JWT_SECRET_MIN_BYTES = 32
MAX_JWT_LEEWAY = 300  # seconds: clock skew, not a grace period for expired tokens


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
        env, d = Environment(environ), cls()
        return cls(
            header_timeout=env.number("HEADER_TIMEOUT", d.header_timeout, float),
            body_timeout=env.number("BODY_TIMEOUT", d.body_timeout, float),
            max_header_bytes=env.number("MAX_HEADER_BYTES", d.max_header_bytes),
            max_headers=env.number("MAX_HEADERS", d.max_headers),
        )


class RedisSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Where the games live: Redis (standalone, Sentinel or Cluster), or in the process."""

    url: str | None = None  # TEN_REDIS_URL; unset: the embedded in-process store
    cluster: bool = False  # TEN_REDIS_CLUSTER: the URL names a Redis Cluster node
    # TEN_REDIS_SENTINELS: host:port of Redis Sentinels, comma-separated: the store is on the
    # primary they name (TEN_REDIS_SENTINEL_MASTER), found again after a failover; the URL
    # then gives only the database and credentials (unset: database 0)
    sentinels: tuple[tuple[str, int], ...] = ()
    sentinel_master: str = "mymaster"  # TEN_REDIS_SENTINEL_MASTER
    # TEN_REDIS_WAIT_REPLICAS: a write (an action, a join, a new game) is acknowledged only
    # once this many replicas have it (WAIT), else 503; 0: once the primary has it
    wait_replicas: int = 0
    wait_timeout: float = 1.0  # TEN_REDIS_WAIT_TIMEOUT: seconds that WAIT may take
    # TEN_REDIS_MAX_CONNECTIONS: the most connections each of a process's two Redis pools
    # opens (the games' store; the outbox, queues and capabilities), a command waiting for
    # one while all are busy; unset: 200 and 50
    max_connections: int | None = None

    def __post_init__(self) -> None:
        if self.sentinels and self.cluster:
            raise ValueError("set TEN_REDIS_SENTINELS or TEN_REDIS_CLUSTER, not both")
        if self.wait_replicas and self.cluster:
            raise ValueError(
                "TEN_REDIS_WAIT_REPLICAS is not supported on a Redis Cluster (a save's WAIT "
                "would have to reach the node of the game's slot)"
            )
        if self.max_connections is not None and self.max_connections < 1:
            raise ValueError("TEN_REDIS_MAX_CONNECTIONS must be at least 1")
        if self.wait_replicas and self.url is None:
            raise ValueError("TEN_REDIS_WAIT_REPLICAS needs Redis (TEN_REDIS_URL or _SENTINELS)")

    @classmethod
    def from_env(cls, env: Environment) -> RedisSettings:
        d = cls()
        sentinels = tuple(_address(item, 26379) for item in env.items("REDIS_SENTINELS"))
        master = env.get("REDIS_SENTINEL_MASTER") or d.sentinel_master
        return cls(
            # through sentinels, the URL's host is not used: the primary's name stands there
            url=env.get("REDIS_URL") or (f"redis://{master}/0" if sentinels else None),
            cluster=env.flag("REDIS_CLUSTER", False),
            sentinels=sentinels,
            sentinel_master=master,
            wait_replicas=env.count("REDIS_WAIT_REPLICAS", d.wait_replicas),
            wait_timeout=env.number("REDIS_WAIT_TIMEOUT", d.wait_timeout, float),
            max_connections=(
                env.count("REDIS_MAX_CONNECTIONS", 0)
                if env.get("REDIS_MAX_CONNECTIONS") is not None
                else None
            ),
        )


class ArchiveSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Where finished games are kept (the SQL archive) and how often its queue is looked at."""

    database_url: str | None = None  # TEN_DATABASE_URL; unset: a SQLite file (embedded default)
    migrate_on_start: bool | None = None  # TEN_MIGRATE_ON_START; unset: only on the default SQLite
    interval: float = 1.0  # TEN_ARCHIVE_INTERVAL: seconds between two looks at the archive queue
    # TEN_PRIVACY_KEY: the key of the erasure ledger's digests (`service.privacy`); unset:
    # a fixed key, fit for development only (a warning at start)
    privacy_key: str | None = None
    # TEN_RATINGS_BY: the places a ranked game rates its players by (`service.history.archiving`):
    # "results" (rated when archived) or "luck_adjusted" (rated when its review is kept)
    ratings_by: RatingsBy = "results"

    @property
    def run_migrations(self) -> bool:
        if self.migrate_on_start is not None:
            return self.migrate_on_start
        return self.database_url is None

    @classmethod
    def from_env(cls, env: Environment) -> ArchiveSettings:
        return cls(
            database_url=env.get("DATABASE_URL"),
            migrate_on_start=None
            if env.get("MIGRATE_ON_START") is None
            else env.flag("MIGRATE_ON_START", False),
            interval=env.number("ARCHIVE_INTERVAL", cls().interval, float),
            privacy_key=env.get("PRIVACY_KEY"),
            ratings_by=cast(RatingsBy, env.choice("RATINGS_BY", RATINGS_BY, cls().ratings_by)),
        )


class IdentitySettings(msgspec.Struct, frozen=True, kw_only=True):
    """Who is calling (service.entrypoints.api.identity): the platform's API keys and the key
    of player JWTs. None of these set: open, identities unverified. Settings that cannot work
    are refused (the values themselves are never in the message); the PEM key itself is
    parsed by service.entrypoints.api.identity."""

    api_keys: tuple[str, ...] = ()  # TEN_API_KEYS: the platform's keys, comma-separated
    jwt_secret: str | None = None  # TEN_JWT_SECRET: HS256 key of player JWTs
    jwt_public_key: str | None = None  # TEN_JWT_PUBLIC_KEY: PEM (RSA, EC or Ed25519/Ed448)
    jwt_jwks_url: str | None = None  # TEN_JWT_JWKS_URL: the platform's JWKS (http/https)
    jwt_issuer: str | None = None  # TEN_JWT_ISSUER: the `iss` player JWTs must carry
    jwt_audience: str | None = None  # TEN_JWT_AUDIENCE: the `aud` player JWTs must carry
    jwt_leeway: int = 30  # TEN_JWT_LEEWAY: seconds of clock skew allowed on exp/nbf/iat

    @property
    def jwt_configured(self) -> bool:
        return any((self.jwt_secret, self.jwt_public_key, self.jwt_jwks_url))

    def __post_init__(self) -> None:
        if any(not key.isprintable() or " " in key for key in self.api_keys):
            raise ValueError("TEN_API_KEYS: a key holds a space or an unprintable character")
        if any(len(key) < 16 for key in self.api_keys):
            raise ValueError("TEN_API_KEYS: every key must be at least 16 characters")
        if self.jwt_leeway > MAX_JWT_LEEWAY:
            raise ValueError(f"TEN_JWT_LEEWAY must be at most {MAX_JWT_LEEWAY} seconds")
        sources = [
            name
            for name, value in (
                ("TEN_JWT_SECRET", self.jwt_secret),
                ("TEN_JWT_PUBLIC_KEY", self.jwt_public_key),
                ("TEN_JWT_JWKS_URL", self.jwt_jwks_url),
            )
            if value
        ]
        if len(sources) > 1:
            raise ValueError(
                f"set only one of {', '.join(sources)}: each names the key of player JWTs"
            )
        if not sources:
            if self.jwt_issuer or self.jwt_audience:
                raise ValueError("TEN_JWT_ISSUER/TEN_JWT_AUDIENCE are set but no JWT key is")
            return
        if not self.jwt_issuer or not self.jwt_audience:
            raise ValueError(
                f"{sources[0]} needs TEN_JWT_ISSUER and TEN_JWT_AUDIENCE: a JWT is accepted "
                "only from its issuer and for this service"
            )
        if self.jwt_secret and len(self.jwt_secret.encode()) < JWT_SECRET_MIN_BYTES:
            raise ValueError(f"TEN_JWT_SECRET must be at least {JWT_SECRET_MIN_BYTES} bytes")
        if self.jwt_jwks_url and not self.jwt_jwks_url.lower().startswith(("https://", "http://")):
            raise ValueError("TEN_JWT_JWKS_URL must be an http:// or https:// URL")

    @classmethod
    def from_env(cls, env: Environment) -> IdentitySettings:
        get = env.get
        return cls(
            api_keys=env.items("API_KEYS"),
            # a PEM given on one line with literal \n (as some secret stores hand it over)
            jwt_public_key=_pem(get("JWT_PUBLIC_KEY")),
            jwt_secret=get("JWT_SECRET"),
            jwt_jwks_url=get("JWT_JWKS_URL"),
            jwt_issuer=get("JWT_ISSUER"),
            jwt_audience=get("JWT_AUDIENCE"),
            jwt_leeway=env.count("JWT_LEEWAY", cls().jwt_leeway),
        )


class WebhookSettings(msgspec.Struct, frozen=True, kw_only=True):
    """The platform's webhook endpoints (service.reactions.webhooks), signed per Standard
    Webhooks: endpoints need a signing secret, and a secret needs somewhere to send."""

    urls: tuple[str, ...] = ()  # TEN_WEBHOOK_URLS: comma-separated http(s) URLs
    secret: str | None = None  # TEN_WEBHOOK_SECRET: `whsec_` + base64 (24-64 bytes)
    timeout: float = 10.0  # TEN_WEBHOOK_TIMEOUT: seconds one delivery may take
    max_backoff: float = 600.0  # TEN_WEBHOOK_MAX_BACKOFF: the longest wait between tries
    retention: int = 3 * 24 * 3600  # TEN_WEBHOOK_RETENTION: seconds a message is retried

    def __post_init__(self) -> None:
        wrong = [u for u in self.urls if not u.lower().startswith(("https://", "http://"))]
        if wrong:
            raise ValueError(f"TEN_WEBHOOK_URLS: {wrong[0]!r} is not an http:// or https:// URL")
        if self.urls and not self.secret:
            raise ValueError("TEN_WEBHOOK_URLS is set: TEN_WEBHOOK_SECRET must be too (whsec_...)")
        if self.secret and not self.urls:
            raise ValueError("TEN_WEBHOOK_SECRET is set but TEN_WEBHOOK_URLS is not")

    @classmethod
    def from_env(cls, env: Environment) -> WebhookSettings:
        d = cls()
        return cls(
            urls=env.items("WEBHOOK_URLS"),
            secret=env.get("WEBHOOK_SECRET"),
            timeout=env.number("WEBHOOK_TIMEOUT", d.timeout, float),
            max_backoff=env.number("WEBHOOK_MAX_BACKOFF", d.max_backoff, float),
            retention=env.number("WEBHOOK_RETENTION", d.retention),
        )


class GameSettings(msgspec.Struct, frozen=True, kw_only=True):
    """How games are created, kept and saved, and how their clocks are watched."""

    allow_custom_deck: bool = True  # TEN_ALLOW_CUSTOM_DECK: accept `deck` when creating a game
    finished_ttl: int = 24 * 3600  # TEN_FINISHED_TTL: seconds a finished game stays readable
    idle_ttl: int = 7 * 24 * 3600  # TEN_IDLE_TTL: seconds an untouched live game is kept
    act_retries: int = 20  # TEN_ACT_RETRIES: optimistic-concurrency retries per action
    # clocks (service.reactions.deadlines): every replica polls the games whose deadline has come
    deadline_poll: float = 0.2  # TEN_DEADLINE_POLL: seconds between two looks at due games
    deadline_lease: float = 15.0  # TEN_DEADLINE_LEASE: seconds a replica holds a claimed game

    @classmethod
    def from_env(cls, env: Environment) -> GameSettings:
        d = cls()
        return cls(
            allow_custom_deck=env.flag("ALLOW_CUSTOM_DECK", True),
            finished_ttl=env.number("FINISHED_TTL", d.finished_ttl),
            idle_ttl=env.number("IDLE_TTL", d.idle_ttl),
            act_retries=env.number("ACT_RETRIES", d.act_retries),
            deadline_poll=env.number("DEADLINE_POLL", d.deadline_poll, float),
            deadline_lease=env.number("DEADLINE_LEASE", d.deadline_lease, float),
        )


class QuotaSettings(msgspec.Struct, frozen=True, kw_only=True):
    """What one caller may hold at once (service.core.quotas); 0: no bound. The platform: none."""

    # TEN_MAX_OPEN_TABLES: open tables one caller (a player, or an anonymous client's
    # address) hosts at once, then 429 too_many_open_tables
    max_open_tables: int = 20
    # TEN_MAX_OPEN_TOURNAMENTS: tournaments one organiser (a player) has not seen end, then
    # 429 too_many_open_tournaments
    max_open_tournaments: int = 5
    # TEN_MAX_PENDING_REVIEWS: review requests one caller has waiting at once (then 429);
    # TEN_REVIEW_QUEUE: waiting in all, every caller together (then 429)
    max_pending_reviews: int = 3
    review_queue: int = 200
    # TEN_MAX_SCHEDULED_BULK_PAIRINGS: bulk pairings the platform has waiting for their
    # start at once (then 429 too_many_bulk_pairings)
    max_scheduled_bulk_pairings: int = 50

    @classmethod
    def from_env(cls, env: Environment) -> QuotaSettings:
        d = cls()
        return cls(
            max_open_tables=env.count("MAX_OPEN_TABLES", d.max_open_tables),
            max_open_tournaments=env.count("MAX_OPEN_TOURNAMENTS", d.max_open_tournaments),
            max_pending_reviews=env.count("MAX_PENDING_REVIEWS", d.max_pending_reviews),
            review_queue=env.count("REVIEW_QUEUE", d.review_queue),
            max_scheduled_bulk_pairings=env.count(
                "MAX_SCHEDULED_BULK_PAIRINGS", d.max_scheduled_bulk_pairings
            ),
        )


class HttpSettings(msgspec.Struct, frozen=True, kw_only=True):
    """What the app accepts of a request: its rate, its body's size, its origin (CORS)."""

    rate_limit: tuple[int, str] | None = None  # TEN_RATE_LIMIT, e.g. "600/minute"; unset: none
    max_body_bytes: int = 64 * 1024  # TEN_MAX_BODY_BYTES: larger bodies get 413
    cors_origins: tuple[str, ...] = ()  # TEN_CORS_ORIGINS: origins (or `*`); unset: no CORS

    def __post_init__(self) -> None:
        origins = self.cors_origins
        if "*" in origins and len(origins) > 1:
            raise ValueError("TEN_CORS_ORIGINS: `*` allows every origin; list no others with it")
        wrong = [o for o in origins if o != "*" and not _ORIGIN.match(o)]
        if wrong:
            raise ValueError(
                f"TEN_CORS_ORIGINS: {wrong[0]!r} is not an origin (scheme://host[:port], no path)"
            )

    @classmethod
    def from_env(cls, env: Environment) -> HttpSettings:
        return cls(
            rate_limit=_rate_limit(env.get("RATE_LIMIT")),
            max_body_bytes=env.number("MAX_BODY_BYTES", cls().max_body_bytes),
            cors_origins=env.items("CORS_ORIGINS"),
        )


class StreamSettings(msgspec.Struct, frozen=True, kw_only=True):
    """The event streams (infra.watchers): past a cap, a stream is refused before it starts."""

    keepalive: float = 15.0  # TEN_SSE_KEEPALIVE: seconds between keep-alive comments
    max_streams: int = 10_000  # TEN_SSE_MAX_STREAMS: open streams per process (then 503)
    max_per_client: int = 100  # TEN_SSE_MAX_PER_CLIENT: per client address (429); 0: none
    buffer: int = 256  # TEN_SSE_BUFFER: events a stream may fall behind before it is dropped

    @classmethod
    def from_env(cls, env: Environment) -> StreamSettings:
        d = cls()
        return cls(
            keepalive=env.number("SSE_KEEPALIVE", d.keepalive, float),
            max_streams=env.number("SSE_MAX_STREAMS", d.max_streams),
            max_per_client=env.count("SSE_MAX_PER_CLIENT", d.max_per_client),
            buffer=env.number("SSE_BUFFER", d.buffer),
        )


class RuntimeSettings(msgspec.Struct, frozen=True, kw_only=True):
    """The process's own work: its bots' worker processes, its job workers, its collector."""

    # the steps in which bots move (service.games.bot_work): computed by this many worker processes
    # per serving process (TEN_BOT_WORKERS; 0: in a thread of the serving process), at most
    # TEN_BOT_QUEUE of them waiting or running at once (then 503 bots_busy)
    bot_workers: int = 1
    bot_queue: int = 64
    # TEN_JOB_WORKERS: this process runs the queues' workers (the archive, the relay's
    # leftovers, the webhooks, the reviews); false (Redis only): `python -m service.cli work`
    # processes run them, and the serving processes only queue their jobs
    job_workers: bool = True
    gc_threshold: int = 10_000  # TEN_GC_THRESHOLD: the serving process's gen-0 GC threshold; 0: off

    @classmethod
    def from_env(cls, env: Environment) -> RuntimeSettings:
        d = cls()
        return cls(
            bot_workers=env.count("BOT_WORKERS", d.bot_workers),
            bot_queue=env.number("BOT_QUEUE", d.bot_queue),
            job_workers=env.flag("JOB_WORKERS", d.job_workers),
            gc_threshold=env.count("GC_THRESHOLD", d.gc_threshold),
        )


class ObservabilitySettings(msgspec.Struct, frozen=True, kw_only=True):
    """Metrics, logs and traces."""

    metrics: bool = True  # TEN_METRICS: Prometheus metrics at GET /metrics
    log_format: str = "auto"  # TEN_LOG_FORMAT: json | text | auto (text on a terminal, else JSON)
    log_level: str = "INFO"  # TEN_LOG_LEVEL
    access_log: bool = False  # TEN_ACCESS_LOG: one log line per request
    tracing: bool = False  # TEN_OTEL_ENABLED (or OTEL_EXPORTER_OTLP_ENDPOINT set): OpenTelemetry

    @classmethod
    def from_env(cls, env: Environment) -> ObservabilitySettings:
        levels = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
        return cls(
            metrics=env.flag("METRICS", True),
            log_format=env.choice("LOG_FORMAT", ("auto", "json", "text"), "auto"),
            log_level=env.choice("LOG_LEVEL", levels, "INFO", upper=True),
            access_log=env.flag("ACCESS_LOG", False),
            tracing=env.flag("OTEL_ENABLED", env.otlp_endpoint_set()),
        )


class CorrespondenceSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Correspondence play (service.correspondence): who is watching a game, the turn
    notices sent by Web Push, the players' vacations."""

    # TEN_VAPID_PRIVATE_KEY: the VAPID key that signs every push message (a P-256 private
    # key: PEM, or its raw 32 bytes in base64url); unset: a key made when the process starts
    # (browsers' subscriptions are tied to the key: they do not outlive a restart then)
    vapid_private_key: str | None = None
    # TEN_VAPID_SUBJECT: how a push service reaches the operator (mailto: or https: URL)
    vapid_subject: str = "mailto:operator@localhost"
    # TEN_PUSH_ALLOW_HTTP_LOOPBACK: subscriptions may name http://127.0.0.1 or localhost
    # endpoints (tests and benches: a local push endpoint); else https only
    push_allow_http_loopback: bool = False
    # TEN_MAX_PUSH_SUBSCRIPTIONS: push subscriptions one player holds (then 429)
    max_push_subscriptions: int = 10
    push_ttl: int = 24 * 3600  # TEN_PUSH_TTL: seconds a push service keeps an undelivered message
    push_tries: int = 5  # TEN_PUSH_TRIES: tries of one push message before it is set aside
    # TEN_PRESENCE_TTL: seconds a replica's word that a player watches a game lasts without
    # being said again (an open stream says it again well before; a killed replica's lapses)
    presence_ttl: float = 45.0
    vacation_days: int = 30  # TEN_VACATION_DAYS: days off a player has in a calendar year

    def __post_init__(self) -> None:
        if not self.vapid_subject.startswith(("mailto:", "https://")):
            raise ValueError("TEN_VAPID_SUBJECT must be a mailto: or https:// URL")

    @classmethod
    def from_env(cls, env: Environment) -> CorrespondenceSettings:
        d = cls()
        return cls(
            vapid_private_key=_pem(env.get("VAPID_PRIVATE_KEY")),
            vapid_subject=env.get("VAPID_SUBJECT") or d.vapid_subject,
            push_allow_http_loopback=env.flag("PUSH_ALLOW_HTTP_LOOPBACK", False),
            max_push_subscriptions=env.number("MAX_PUSH_SUBSCRIPTIONS", d.max_push_subscriptions),
            push_ttl=env.number("PUSH_TTL", d.push_ttl),
            push_tries=env.number("PUSH_TRIES", d.push_tries),
            presence_ttl=env.number("PRESENCE_TTL", d.presence_ttl, float),
            vacation_days=env.count("VACATION_DAYS", d.vacation_days),
        )


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    """Every setting, by concern (see the module docstring)."""

    redis: RedisSettings = msgspec.field(default_factory=RedisSettings)
    archive: ArchiveSettings = msgspec.field(default_factory=ArchiveSettings)
    identity: IdentitySettings = msgspec.field(default_factory=IdentitySettings)
    webhooks: WebhookSettings = msgspec.field(default_factory=WebhookSettings)
    games: GameSettings = msgspec.field(default_factory=GameSettings)
    quotas: QuotaSettings = msgspec.field(default_factory=QuotaSettings)
    http: HttpSettings = msgspec.field(default_factory=HttpSettings)
    streams: StreamSettings = msgspec.field(default_factory=StreamSettings)
    runtime: RuntimeSettings = msgspec.field(default_factory=RuntimeSettings)
    observability: ObservabilitySettings = msgspec.field(default_factory=ObservabilitySettings)
    correspondence: CorrespondenceSettings = msgspec.field(default_factory=CorrespondenceSettings)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Every group from its variables."""
        env = Environment(environ)
        return cls(
            redis=RedisSettings.from_env(env),
            archive=ArchiveSettings.from_env(env),
            identity=IdentitySettings.from_env(env),
            webhooks=WebhookSettings.from_env(env),
            games=GameSettings.from_env(env),
            quotas=QuotaSettings.from_env(env),
            http=HttpSettings.from_env(env),
            streams=StreamSettings.from_env(env),
            runtime=RuntimeSettings.from_env(env),
            observability=ObservabilitySettings.from_env(env),
            correspondence=CorrespondenceSettings.from_env(env),
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


def _pem(value: str | None) -> str | None:
    if value is None or "\n" in value:
        return value
    return value.replace("\\n", "\n")
