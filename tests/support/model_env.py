"""Environment for a worker whose model arm talks to the local fake OpenAI server."""

from __future__ import annotations

import json

from tests.fakes.openai_server import FakeOpenAIServer


def model_worker_env(
    base: dict[str, str], server: FakeOpenAIServer, **formation: str
) -> dict[str, str]:
    env = dict(base)
    env.update(
        ENGRAM_FORMATION_EXTRACTOR="model",
        ENGRAM_MODEL_ENDPOINT=server.base_url,
        ENGRAM_MODEL_NAME="fake-model",
        ENGRAM_MODEL_ALLOWLIST=json.dumps([server.origin]),
        ENGRAM_MODEL_TIMEOUT_S="10",
        ENGRAM_MODEL_RETRY_AFTER_S="0.05",
        ENGRAM_WORKER_HTTP_PORT="0",
        # These workers test the pipeline, not activation: the evidence gate has tests of its
        # own (tests/integration/test_model_activation.py).
        ENGRAM_FORMATION_ALLOW_UNEVALUATED_MODEL="true",
    )
    env.update({f"ENGRAM_FORMATION_{key.upper()}": value for key, value in formation.items()})
    return env
