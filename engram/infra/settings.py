"""Every setting Engram reads, in one object with sections; nothing else reads the environment.

Values come from environment variables (``ENGRAM_<SECTION>_<FIELD>``) and, below them, from the
dotenv file the local-services scripts write (``<state dir>/services.env``, or
``ENGRAM_ENV_FILE``). docs/configuration.md lists every setting; a test keeps that list complete.

The state directory (``ENGRAM_STATE_DIR``) holds what a process keeps on local disk: that dotenv
file and faust's data directory. In a checkout it is the checkout's ``.dev/`` (where
``dev/services.sh`` writes); an installed package defaults to ``$XDG_STATE_HOME/engram``. Nothing
is ever written next to the installed code.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


def _checkout_root() -> Path | None:
    """The source checkout this module runs from, if it runs from one (not an installed wheel)."""
    root = Path(__file__).resolve().parents[2]
    is_checkout = (root / "pyproject.toml").is_file() and (root / "dev" / "services.sh").is_file()
    return root if is_checkout else None


def default_state_dir() -> Path:
    checkout = _checkout_root()
    if checkout is not None:
        return checkout / ".dev"
    state_home = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state_home) / "engram"


def state_dir() -> Path:
    return Path(os.environ.get("ENGRAM_STATE_DIR") or default_state_dir())


def _env_file() -> Path:
    return Path(os.environ.get("ENGRAM_ENV_FILE") or state_dir() / "services.env")


def _section(prefix: str) -> SettingsConfigDict:
    return SettingsConfigDict(
        env_prefix=prefix, env_file=_env_file(), env_file_encoding="utf-8", extra="ignore"
    )


class KafkaSettings(BaseSettings):
    model_config = _section("ENGRAM_KAFKA_")

    bootstrap: str = Field("127.0.0.1:19092", description="Kafka bootstrap servers.")
    episodes_topic: str = Field("engram.episodes", description="The episodic log.")
    claims_topic: str = Field("engram.claims", description="Claims batches, keyed by principal.")
    dlq_topic: str = Field("engram.episodes.dlq", description="Dead letters of the episodic log.")
    memory_events_topic: str = Field("engram.memory-events", description="Memory changes.")
    inbox_topic: str = Field(
        "engram.inbox",
        description="Plaintext turns from producers that write to Kafka themselves; `engram "
        "inbox` validates, encrypts and appends them to the episodic log.",
    )
    inbox_retention_ms: int = Field(
        604_800_000,
        ge=60_000,
        description="How long the inbox keeps a record the intake never reached (7 days); the "
        "intake deletes what it moved at once. Applied when Engram creates the topic.",
    )
    inbox_segment_ms: int = Field(
        10_000,
        ge=1000,
        description="How long a segment of the inbox stays open before the intake rolls it: "
        "Kafka deletes only closed segments, so this bounds how long a moved turn's plaintext "
        "stays in the broker's files (docs/privacy.md). Applied when Engram creates the topic.",
    )
    partitions: int = Field(6, ge=1, description="Partitions of topics Engram creates.")
    max_event_bytes: int = Field(1_048_576, ge=1024, description="Largest accepted episode.")
    group_id: str = Field("engram-formation", description="Consumer group of the faust app.")
    session_timeout_ms: int = Field(6000, description="Consumer session timeout.")
    producer_request_timeout_ms: int = Field(
        120_000,
        ge=1000,
        description="Producers' request timeout: how long a produce request, a queued batch "
        "and a blocked send may wait before Engram's own retry takes over (faust: 1,200 s).",
    )
    producer_max_request_bytes: int = Field(
        1_000_000,
        ge=1024,
        description="Largest record the formation worker publishes (claims batch or dead "
        "letter); a larger claims batch is dead-lettered. Keep it at or below the topics' "
        "max.message.bytes (broker default 1,048,588).",
    )


def subprocess_env(
    kafka: KafkaSettings,
    database_url: str,
    *,
    keys: KeysSettings | None = None,
    **extra: str,
) -> dict[str, str]:
    """The environment for an ``engram`` child process that must use exactly these Kafka
    settings and this database (tests, benchmarks): this process's environment, every
    ``ENGRAM_KAFKA_*`` field spelled out, and no dotenv file underneath to fill gaps. The keys
    are ``keys`` or this process's own (from its environment and dotenv file), spelled out too:
    the log is encrypted by default, and a child without its KEK would refuse to start."""
    prefix = str(kafka.model_config.get("env_prefix", ""))
    chosen_keys = _keys_env(keys or KeysSettings())
    env = {name: value for name, value in os.environ.items() if not name.startswith("ENGRAM_KEYS_")}
    env.update({(prefix + name).upper(): str(value) for name, value in kafka.model_dump().items()})
    env.update(chosen_keys)
    env.update(ENGRAM_ENV_FILE="/nonexistent", ENGRAM_DATABASE_URL=database_url, **extra)
    return env


def _keys_env(keys: KeysSettings) -> dict[str, str]:
    env = {"ENGRAM_KEYS_ENCRYPT_LOG": str(keys.encrypt_log).lower()}
    if keys.kek is not None:
        env["ENGRAM_KEYS_KEK"] = keys.kek.get_secret_value()
    if keys.kek_file is not None:
        env["ENGRAM_KEYS_KEK_FILE"] = str(keys.kek_file)
    if keys.previous_kek is not None:
        env["ENGRAM_KEYS_PREVIOUS_KEK"] = keys.previous_kek.get_secret_value()
    return env


class DatabaseSettings(BaseSettings):
    model_config = _section("ENGRAM_DATABASE_")

    url: SecretStr = Field(
        SecretStr("postgresql://engram:engram@127.0.0.1:15432/engram"),
        description="PostgreSQL connection URL (a secret: never logged).",
    )
    pool_max: int = Field(8, ge=1, description="Largest connection pool size.")


class ModelSettings(BaseSettings):
    model_config = _section("ENGRAM_MODEL_")

    endpoint: str | None = Field(
        None, description="OpenAI-compatible base URL, e.g. http://127.0.0.1:8089/v1."
    )
    name: str | None = Field(None, description="Model name sent with each request.")
    api_key: SecretStr = Field(SecretStr("unused"), description="Bearer token for the endpoint.")
    allowlist: list[str] = Field(
        default_factory=list,
        description="Origins (scheme://host:port) allowed to receive message text.",
    )
    timeout_s: float = Field(30.0, gt=0, description="Per-request timeout in seconds.")
    max_response_bytes: int = Field(1_048_576, description="Largest model reply accepted.")
    max_attempts: int = Field(
        3, ge=1, description="Model calls per message before it fails (or falls back in both)."
    )
    retry_after_s: float = Field(
        1.0, ge=0, description="Wait after a failed model call; doubles per attempt."
    )
    context_messages: int = Field(
        8,
        ge=0,
        le=64,
        description="Earlier messages of the session sent as context with a message (0: none).",
    )
    context_chars: int = Field(
        4000, ge=0, le=64_000, description="Most characters of context, whole messages only."
    )


EmbeddedRole = Literal["user", "assistant", "system", "tool"]
"""A message's role (``engram.schemas.common.Role``'s values)."""


class EmbeddingSettings(BaseSettings):
    model_config = _section("ENGRAM_EMBEDDING_")

    provider: Literal["local", "openai"] = Field(
        "local",
        description="Who makes vectors: a packaged local model (no network, GPU or account) "
        "or an OpenAI-compatible embeddings endpoint.",
    )
    local_model: Literal["multilingual-e5-small", "wordllama"] = Field(
        "multilingual-e5-small",
        description="The packaged model for provider=local: multilingual-e5-small (contextual, "
        "about 100 languages, 384 dimensions; the default) or wordllama (static, English, "
        "64/128/256 dimensions, about 500 times less CPU per message: docs/retrieval.md).",
    )
    dimensions: int | None = Field(
        None,
        ge=1,
        le=8192,
        description="Vector size; unset: the model's own (384 for multilingual-e5-small, 256 "
        "for wordllama, which also offers 64 and 128; 256 for an endpoint, sent as "
        "`dimensions`).",
    )
    recipe: str = Field(
        "content-words-v1",
        description="provider=openai: the text recipe the endpoint's model is used with "
        "(plain-v1, content-words-v1, e5-query-passage-v1: questions and messages prefixed the "
        "E5 way, input-type-v1: sent as `input_type`); a local model has its own.",
    )
    threads: int = Field(
        1,
        ge=0,
        description="CPU threads of the local contextual model per embedding call (default 1; "
        "every core against one thread under load: docs/benchmarks.md, 'Recall under load'); "
        "0: the engine's default, every core.",
    )
    roles: list[EmbeddedRole] = Field(
        default_factory=lambda: list[EmbeddedRole](["user"]),
        min_length=1,
        description="Whose messages are embedded: by default the principal's own (user), what "
        "recall's semantic list searches unless asked; add roles for recall role= to find "
        'theirs by meaning too (JSON list, e.g. ["user","assistant"]).',
    )
    in_worker: bool = Field(
        False,
        description="engram worker embeds on its own event loop rather than in a child "
        "process it starts and stops (`engram embedder`); the light model (wordllama) always "
        "shares the index's follower in the worker.",
    )
    nice: int = Field(
        10,
        ge=0,
        le=19,
        description="The niceness of the embedding child process `engram worker` starts: "
        "formation and the index go first on a busy machine, the vectors lag.",
    )
    endpoint: str | None = Field(
        None, description="OpenAI-compatible base URL for provider=openai, e.g. http://h/v1."
    )
    model: str | None = Field(None, description="Embedding model name sent to the endpoint.")
    api_key: SecretStr = Field(
        SecretStr("unused"), description="Bearer token for the endpoint (a secret: never logged)."
    )
    allowlist: list[str] = Field(
        default_factory=list,
        description="Origins (scheme://host:port) allowed to receive message text for embedding.",
    )
    batch_size: int = Field(64, ge=1, le=2048, description="Texts per embeddings request.")
    timeout_s: float = Field(30.0, gt=0, description="Per-request timeout in seconds.")
    max_attempts: int = Field(3, ge=1, description="Requests per batch before it fails.")
    retry_after_s: float = Field(
        1.0, ge=0, description="Wait after a failed request; doubles per attempt."
    )


class FormationSettings(BaseSettings):
    model_config = _section("ENGRAM_FORMATION_")

    extractor: Literal["deterministic", "model", "both"] = Field(
        "deterministic", description="Which extractor arms run."
    )
    prompt_path: Path | None = Field(
        None, description="Prompt file; unset means the packaged prompts/extraction.yaml."
    )
    policy_file: Path | None = Field(
        None,
        description="Formation policy file (YAML); when set it decides the extractor kind, "
        "model identity, thresholds, caps, gates and relations instead of the defaults.",
    )
    evidence_path: Path | None = Field(
        None,
        description="The model arm's evaluation artifact, written by `engram eval formation "
        "--arm model --record` and required to start a model or both extractor; unset means "
        "<state dir>/model-evaluation.json.",
    )
    allow_unevaluated_model: bool = Field(
        False,
        description="Start a model or both extractor without a passing evaluation artifact "
        "(logged as an error at every start). For development only.",
    )
    turn_budget_s: float = Field(300.0, gt=0, description="Time budget of one formation attempt.")
    max_attempts: int = Field(6, ge=1, description="Failed attempts before an episode is parked.")
    retry_after_s: float = Field(10.0, gt=0, description="First retry wait; doubles per attempt.")
    max_in_flight: int = Field(1000, ge=1, description="Episodes a worker forms concurrently.")
    requeue_poll_s: float = Field(
        2.0, gt=0, description="How often unparked episodes are picked up."
    )
    publish_retry_after_s: float = Field(
        0.5, gt=0, description="First wait before a failed Kafka publish is retried; doubles."
    )
    publish_retry_max_s: float = Field(
        30.0, gt=0, description="Longest wait between retries of a failed Kafka publish."
    )


class WorkerSettings(BaseSettings):
    model_config = _section("ENGRAM_WORKER_")

    http_host: str = Field("127.0.0.1", description="Address of /health, /ready and /metrics.")
    http_port: int = Field(6067, ge=0, description="Port of /health, /ready, /metrics; 0 = off.")
    stall_after_s: float = Field(
        600.0, gt=0, description="An in-flight episode older than this makes the worker unready."
    )
    publish_stall_after_s: float = Field(
        15.0,
        gt=0,
        description="A record waiting this long for Kafka's acknowledgement makes the worker "
        "unready.",
    )
    projector_lanes: int = Field(
        2,
        ge=1,
        le=64,
        description="Lanes per claims partition in the belief projector: each applies its "
        "principals' chunks in its own transaction, so one lane's resolution overlaps "
        "another's statements in PostgreSQL (1: one chunk per partition at a time).",
    )


class StateSettings(BaseSettings):
    model_config = _section("ENGRAM_STATE_")

    dir: Path = Field(
        default_factory=state_dir,
        description="Local state: the services dotenv file and faust's data directory.",
    )


class ApiSettings(BaseSettings):
    model_config = _section("ENGRAM_API_")

    host: str = Field("127.0.0.1", description="Address the read API binds.")
    port: int = Field(8080, description="Port the read API binds.")
    dev_mode: bool = Field(
        False,
        description="Serve without tokens (loopback only): for a developer's own machine.",
    )
    max_body_bytes: int = Field(
        8_388_608, ge=1024, description="Largest request body; a larger one is answered 413."
    )
    ui_secret: SecretStr | None = Field(
        None,
        description="The secret the inspector (/ui) derives its keys from (HKDF): one signs its "
        "forms (CSRF), one seals the forgetting cookie. It must hold at least 32 random bytes "
        "(256 bits) by an estimate that counts a repeat, a sequence or a word for little "
        "(`python3 -c 'import secrets; print(secrets.token_urlsafe(48))'` always does), "
        "or `engram api` refuses to start; the same on every API process behind one address. "
        "Unset: a random one per process. A secret, never logged.",
    )
    ui_session_s: int = Field(
        43_200,
        ge=60,
        le=2_592_000,
        description="How long an inspector session lasts, in seconds; it ends sooner on "
        "sign-out, when its token is revoked or expires, and when its person is forgotten.",
    )


class McpSettings(BaseSettings):
    model_config = _section("ENGRAM_MCP_")

    token: SecretStr | None = Field(
        None,
        description="The principal's API token `engram mcp` acts with over stdio (a secret: "
        "never logged); over HTTP each request brings its own bearer token instead.",
    )
    host: str = Field("127.0.0.1", description="Address `engram mcp --transport http` binds.")
    port: int = Field(8090, description="Port `engram mcp --transport http` binds.")


class KeysSettings(BaseSettings):
    """The key-encryption key that wraps every principal's data key (keys/, docs/privacy.md)."""

    model_config = _section("ENGRAM_KEYS_")

    kek: SecretStr | None = Field(
        None,
        description="The key-encryption key: 32 random bytes, base64 (`engram keys new-kek`). "
        "A secret, never logged; losing it loses every encrypted word. Wins over `kek_file`.",
    )
    kek_file: Path | None = Field(
        None,
        description="A file holding the key-encryption key (the same base64 text), readable by "
        "its owner only: what `dev/services.sh` creates under the state directory and compose "
        "mounts as a secret. Used when `kek` is unset.",
    )
    previous_kek: SecretStr | None = Field(
        None,
        description="The key-encryption key being rotated away from: keys still wrapped by it "
        "stay readable until `engram keys rotate` re-wraps them under `kek`.",
    )
    encrypt_log: bool = Field(
        True,
        description="Encrypt every person's words appended to the log under their principal's "
        "data key (docs/privacy.md). On by default: a process that appends refuses to start "
        "without a key-encryption key unless this is set to false explicitly. Readers open "
        "encrypted events whenever a KEK is set, whatever this says.",
    )
    cache_size: int = Field(
        10_000, ge=1, description="Unwrapped data keys one process keeps (least recently used)."
    )
    rotate_batch: int = Field(
        500,
        ge=1,
        le=100_000,
        description="Data keys `engram keys rotate` re-wraps per transaction.",
    )


class WebhooksSettings(BaseSettings):
    """Signed notifications to the endpoints projects register (engram/notifications/,
    docs/notifications.md)."""

    model_config = _section("ENGRAM_WEBHOOKS_")

    allowlist: list[str] = Field(
        default_factory=list,
        description="Origins (scheme://host:port) an endpoint may use although they are plain "
        "http or resolve to a private, loopback or link-local address; any other destination "
        "must be https to a public address.",
    )
    allow_private: bool = Field(
        False,
        description="Allow destinations that resolve to private or loopback addresses (and "
        "plain http to them), never link-local ones: for a receiver on this machine in tests.",
    )
    timeout_s: float = Field(
        10.0, gt=0, le=60, description="Time for one delivery attempt: connect, send, answer."
    )
    max_attempts: int = Field(
        8,
        ge=6,
        le=30,
        description="Attempts before a delivery is parked (at least the six seed 003 sets).",
    )
    retry_after_s: float = Field(
        5.0, ge=5, description="Wait after a delivery's first failure; doubles, plus jitter."
    )
    retry_max_s: float = Field(3600.0, ge=5, description="Longest wait between two attempts.")
    lease_s: float = Field(
        60.0,
        gt=0,
        description="How long a claimed delivery is a sender's; one whose sender died is sent "
        "again (same webhook-id) once it lapses. Longer than timeout_s.",
    )
    concurrency: int = Field(8, ge=1, le=256, description="Attempts one notifier makes at once.")
    poll_s: float = Field(
        1.0, gt=0, le=60, description="How often an idle notifier looks for due deliveries."
    )
    disable_after_failures: int = Field(
        30,
        ge=1,
        description="Consecutive failed attempts after which an endpoint is disabled (once it "
        "has also been failing for disable_after_s).",
    )
    disable_after_s: float = Field(
        86_400.0, ge=0, description="How long an endpoint must have been failing to be disabled."
    )
    rotation_overlap_s: float = Field(
        86_400.0,
        ge=0,
        description="After a secret rotation, how long deliveries are signed with the old "
        "secret as well as the new one.",
    )
    keep_delivered_days: float = Field(
        7.0, gt=0, description="Delivered notifications are listed (and deduplicated) this long."
    )

    @model_validator(mode="after")
    def _lease_outlasts_an_attempt(self) -> WebhooksSettings:
        if self.lease_s <= self.timeout_s:
            raise ValueError(
                f"ENGRAM_WEBHOOKS_LEASE_S ({self.lease_s}) must be longer than "
                f"ENGRAM_WEBHOOKS_TIMEOUT_S ({self.timeout_s}): a sender still inside its "
                "attempt would see its delivery sent again by another"
            )
        return self


class Settings:
    """All sections together; built once per process and passed down explicitly."""

    def __init__(
        self,
        *,
        kafka: KafkaSettings | None = None,
        database: DatabaseSettings | None = None,
        model: ModelSettings | None = None,
        formation: FormationSettings | None = None,
        api: ApiSettings | None = None,
        worker: WorkerSettings | None = None,
        state: StateSettings | None = None,
        mcp: McpSettings | None = None,
        embedding: EmbeddingSettings | None = None,
        keys: KeysSettings | None = None,
        webhooks: WebhooksSettings | None = None,
    ) -> None:
        self.kafka = kafka or KafkaSettings()
        self.database = database or DatabaseSettings()
        self.model = model or ModelSettings()
        self.formation = formation or FormationSettings()
        self.api = api or ApiSettings()
        self.worker = worker or WorkerSettings()
        self.state = state or StateSettings()
        self.mcp = mcp or McpSettings()
        self.embedding = embedding or EmbeddingSettings()
        self.keys = keys or KeysSettings()
        self.webhooks = webhooks or WebhooksSettings()


@lru_cache(maxsize=1)
def load_settings() -> Settings:
    return Settings()


SECTIONS: tuple[type[BaseSettings], ...] = (
    KafkaSettings,
    DatabaseSettings,
    ModelSettings,
    FormationSettings,
    ApiSettings,
    WorkerSettings,
    StateSettings,
    McpSettings,
    EmbeddingSettings,
    KeysSettings,
    WebhooksSettings,
)
