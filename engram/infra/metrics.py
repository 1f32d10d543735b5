"""Prometheus metrics of the formation worker and the belief projector, in one registry served
on /metrics."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

REGISTRY = CollectorRegistry()

EPISODES_FORMED = Counter(
    "engram_episodes_formed", "Episodes whose claims batch was published.", registry=REGISTRY
)
CANDIDATES_ADMITTED = Counter(
    "engram_candidates_admitted", "Candidates admitted by the formation core.", registry=REGISTRY
)
PROPOSALS_REFUSED = Counter(
    "engram_proposals_refused", "Refused proposals, by reason.", ["reason"], registry=REGISTRY
)
EPISODES_PARKED = Counter(
    "engram_episodes_parked", "Episodes parked after their attempts.", registry=REGISTRY
)
DEAD_LETTERS = Counter(
    "engram_dead_letters", "Records sent to the dead-letter topic.", ["reason"], registry=REGISTRY
)
ATTEMPTS = Counter(
    "engram_formation_attempts", "Formation attempts, by outcome.", ["outcome"], registry=REGISTRY
)
MODEL_LATENCY = Histogram(
    "engram_model_latency_seconds",
    "Latency of model extraction calls.",
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120),
    registry=REGISTRY,
)
MODEL_RECEIPTS = Counter(
    "engram_model_receipts",
    "Model answers looked up by (model, prompt, input): hit (no model call) or miss.",
    ["outcome"],
    registry=REGISTRY,
)
MODEL_ATTEMPTS = Counter(
    "engram_model_attempts",
    "Model calls, by status (answered or failed) and failure kind (empty when answered).",
    ["status", "failure"],
    registry=REGISTRY,
)
MODEL_SKIPPED = Counter(
    "engram_model_skipped",
    "Messages the model arm did not ask about because every claim of theirs would be refused, "
    "by that refusal's reason (untrusted_source, system_restatement).",
    ["reason"],
    registry=REGISTRY,
)
MODEL_FALLBACKS = Counter(
    "engram_model_fallbacks",
    "Messages formed by the deterministic arm alone in both mode after every model attempt "
    "failed, by the last failure's kind.",
    ["failure"],
    registry=REGISTRY,
)
CONSUMER_LAG = Gauge(
    "engram_consumer_lag", "Episodes not yet read, per partition.", ["partition"], registry=REGISTRY
)
IN_FLIGHT = Gauge("engram_in_flight", "Episodes read but not finished.", registry=REGISTRY)
DATABASE_UNAVAILABLE = Counter(
    "engram_database_unavailable",
    "Database operations that found PostgreSQL unreachable and will be retried, by operation.",
    ["operation"],
    registry=REGISTRY,
)
BATCHES_PROJECTED = Counter(
    "engram_batches_projected",
    "Claims batches the belief projector committed: applied, or skipped as already applied.",
    ["outcome"],
    registry=REGISTRY,
)
MESSAGES_INDEXED = Counter(
    "engram_messages_indexed",
    "Messages the message indexer read into the index (written, or left out as hidden or a "
    "forgotten principal's).",
    registry=REGISTRY,
)
MESSAGES_EMBEDDED = Counter(
    "engram_messages_embedded",
    "Messages the embedding follower read into its generation (embedded and written, or left "
    "out as hidden or a forgotten principal's).",
    registry=REGISTRY,
)
FOLLOWER_RECORDS = Counter(
    "engram_follower_records",
    "Records a log follower fetched and decoded (each opened once, whatever number of sinks "
    "it hands them to), by follower.",
    ["follower"],
    registry=REGISTRY,
)
FOLLOWER_LAG = Gauge(
    "engram_follower_lag",
    "Records of a partition a follower's sink has not taken yet (the broker's high water "
    "mark less the sink's next offset), by sink and partition.",
    ["sink", "partition"],
    registry=REGISTRY,
)
SEALED_OPENED = Counter(
    "engram_sealed_opened",
    "Sealed records opened (authenticated and decrypted) in this process, by kind: event (a "
    "turn or memory of the episodic log) or claims (a claims batch).",
    ["kind"],
    registry=REGISTRY,
)
PUBLISH_RETRIES = Counter(
    "engram_publish_retries",
    "Publishes to Kafka sent again after a retriable error, by stream (claims, dead_letters) "
    "and error.",
    ["stream", "error"],
    registry=REGISTRY,
)
WEBHOOK_OWED = Counter(
    "engram_webhook_deliveries_owed",
    "Webhook deliveries the notifier recorded as owed (one per event and endpoint).",
    registry=REGISTRY,
)
WEBHOOK_ATTEMPTS = Counter(
    "engram_webhook_attempts",
    "Webhook delivery attempts, by outcome: delivered, retried, parked, or lapsed (the lease "
    "ran out first and another sender has it).",
    ["outcome"],
    registry=REGISTRY,
)
WEBHOOK_LATENCY = Histogram(
    "engram_webhook_attempt_seconds",
    "Time of one webhook delivery attempt, resolution and signing included.",
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
    registry=REGISTRY,
)
WEBHOOK_PENDING = Gauge(
    "engram_webhook_pending", "Webhook deliveries owed and not yet made.", registry=REGISTRY
)
WEBHOOK_LAG = Gauge(
    "engram_webhook_lag_seconds",
    "How long the oldest owed webhook delivery has waited (0 when none waits).",
    registry=REGISTRY,
)
WEBHOOK_PARKED = Gauge(
    "engram_webhook_parked",
    "Webhook deliveries parked after failing for good (`engram webhooks deliveries --failed`).",
    registry=REGISTRY,
)
WEBHOOK_DISABLED = Gauge(
    "engram_webhook_endpoints_disabled",
    "Webhook endpoints disabled after failing (`engram webhooks list`).",
    registry=REGISTRY,
)
