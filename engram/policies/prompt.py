"""The extraction prompt as data: read, validated and digested.

Prompts live in ``prompts/`` as YAML; their bytes are part of the policy version (the digest),
so the policy in force is learnt here, below the stages, without the model arm that renders the
prompt (:mod:`engram.streams.model.prompt`). A broken file raises :class:`PromptError` at start, naming the
file and what is wrong: a worker whose prompt does not parse must not start.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from engram.infra.errors import EngramFailure

SECTIONS: tuple[str, ...] = (
    "task",
    "relations",
    "quote_rule",
    "polarity",
    "tense",
    "reply_shape",
    "data_boundary",
)
"""The required sections, in the order they are rendered; ``data_boundary`` is always last."""

CONTRACT_KEYS: tuple[str, ...] = ("temperature", "response_format")
RELATIONS_PLACEHOLDER = "{{relations}}"
SUPPORTED_TEMPERATURE = 0.0
SUPPORTED_RESPONSE_FORMAT = "json_object"


class PromptError(EngramFailure, ValueError):
    """The prompt file is missing, unreadable or malformed; the message names the file."""

    code = "invalid_prompt"


@dataclass(frozen=True, slots=True)
class ExtractionPrompt:
    """A validated extraction prompt, with the digest of the bytes it was read from."""

    task: str
    relations: str
    quote_rule: str
    polarity: str
    tense: str
    reply_shape: str
    data_boundary: str
    digest: str
    temperature: float
    response_format: str

    def section(self, name: str) -> str:
        text: str = getattr(self, name)
        return text


PACKAGED_PROMPT = "extraction.yaml"
"""The shipped prompt, package data of ``prompts``: read with importlib.resources, so an
installed wheel finds it wherever it is installed."""


def packaged_prompt_bytes() -> bytes:
    return resources.files("engram.prompts").joinpath(PACKAGED_PROMPT).read_bytes()


def load_extraction_prompt(path: Path | None = None) -> ExtractionPrompt:
    """Read and validate the prompt file (the packaged one when ``path`` is None); raises
    :class:`PromptError` if it is broken."""
    if path is None:
        return parse_extraction_prompt(packaged_prompt_bytes(), source=f"prompts/{PACKAGED_PROMPT}")
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise PromptError(f"prompt file {path}: cannot be read ({exc.strerror})") from None
    return parse_extraction_prompt(raw, source=str(path))


def parse_extraction_prompt(raw: bytes, *, source: str) -> ExtractionPrompt:
    """Validate prompt bytes; ``source`` names the file in every error."""
    document = _parse_yaml(raw, source)
    _check_keys(document, source)
    sections = {name: _section_text(document, name, source) for name in SECTIONS}
    _check_placeholder(sections, source)
    temperature, response_format = _contract(document, source)
    return ExtractionPrompt(
        **sections,
        digest=hashlib.sha256(raw).hexdigest(),
        temperature=temperature,
        response_format=response_format,
    )


def _parse_yaml(raw: bytes, source: str) -> Mapping[str, Any]:
    try:
        document = yaml.safe_load(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise PromptError(f"prompt file {source}: is not UTF-8") from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" at line {where.line + 1}" if where is not None else ""
        raise PromptError(f"prompt file {source}: is not valid YAML{line}") from None
    if not isinstance(document, dict):
        raise PromptError(f"prompt file {source}: must be a mapping of sections")
    return document


def _check_keys(document: Mapping[str, Any], source: str) -> None:
    unknown = sorted(str(key) for key in document if key not in (*SECTIONS, *CONTRACT_KEYS))
    if unknown:
        raise PromptError(f"prompt file {source}: unknown keys {', '.join(unknown)}")
    missing = [name for name in (*SECTIONS, *CONTRACT_KEYS) if name not in document]
    if missing:
        raise PromptError(f"prompt file {source}: missing {', '.join(missing)}")


def _section_text(document: Mapping[str, Any], name: str, source: str) -> str:
    text = document[name]
    if not isinstance(text, str):
        raise PromptError(f"prompt file {source}: section {name} must be text")
    if not text.strip():
        raise PromptError(f"prompt file {source}: section {name} is empty")
    return text.strip()


def _check_placeholder(sections: Mapping[str, str], source: str) -> None:
    count = sections["relations"].count(RELATIONS_PLACEHOLDER)
    if count != 1:
        raise PromptError(
            f"prompt file {source}: section relations must contain {RELATIONS_PLACEHOLDER} "
            f"exactly once, found {count}"
        )
    for name, text in sections.items():
        if name != "relations" and RELATIONS_PLACEHOLDER in text:
            raise PromptError(
                f"prompt file {source}: {RELATIONS_PLACEHOLDER} belongs only in section "
                f"relations, found in {name}"
            )


def _contract(document: Mapping[str, Any], source: str) -> tuple[float, str]:
    temperature = document["temperature"]
    response_format = document["response_format"]
    is_number = isinstance(temperature, int | float) and not isinstance(temperature, bool)
    if not is_number or float(temperature) != SUPPORTED_TEMPERATURE:
        raise PromptError(f"prompt file {source}: temperature must be 0, got {temperature!r}")
    if response_format != SUPPORTED_RESPONSE_FORMAT:
        raise PromptError(
            f"prompt file {source}: response_format must be {SUPPORTED_RESPONSE_FORMAT}, "
            f"got {response_format!r}"
        )
    return float(temperature), SUPPORTED_RESPONSE_FORMAT
