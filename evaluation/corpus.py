"""The labeled formation corpus: YAML files of cases, loaded into typed values.

A case is a few messages and the claims that must form (``expect``), may form (``allow``) and
must never form (``forbid``) from them. A first-person end is written ``speaker`` and a project
end ``project``. A malformed case is an error that names its file and case id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from engram.infra.errors import EngramFailure
from engram.schemas.common import Role


class CorpusError(EngramFailure, ValueError):
    """A corpus file or case that cannot be read; the message names the file and case."""

    code = "invalid_corpus"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LabeledClaim(_Strict):
    subject: str = Field(min_length=1)
    relation: str = Field(min_length=1)
    object: str = Field(min_length=1)
    facet: str | None = None
    polarity: Literal["assert", "retract"] = "assert"
    tense: Literal["present", "past"] = "present"
    """``past``: a state that held and has ended, kept as history ("I used to live in Cork").
    Events match whatever their tense; a state matches only a label of its own tense, so a
    ``forbid`` of a current value is not met by the same value kept as history."""


class CorpusMessage(_Strict):
    role: Role
    content: str


class Case(_Strict):
    id: str = Field(min_length=1)
    messages: list[CorpusMessage] = Field(min_length=1)
    expect: list[LabeledClaim] = Field(default_factory=list)
    allow: list[LabeledClaim] = Field(default_factory=list)
    forbid: list[LabeledClaim] = Field(default_factory=list)
    note: str | None = None


def corpus_files(path: Path) -> list[Path]:
    """``path`` itself, or every ``*.yaml``/``*.yml`` under it, in name order."""
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.suffix in {".yaml", ".yml"})
    if not path.exists():
        raise CorpusError(f"{path}: no such corpus file or folder")
    return [path]


def load_file(path: Path) -> list[Case]:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise CorpusError(f"{path}: not valid YAML: {exc}") from exc
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise CorpusError(f"{path}: a corpus file is a list of cases")
    return [_case(path, index, item) for index, item in enumerate(raw)]


def _case(path: Path, index: int, item: object) -> Case:
    case_id = item.get("id") if isinstance(item, dict) else None
    where = f"{path}: case {case_id!r}" if case_id else f"{path}: case #{index + 1}"
    try:
        return Case.model_validate(item)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'case'}: {e['msg']}" for e in exc.errors()
        )
        raise CorpusError(f"{where}: {problems}") from exc


def load_corpus(path: Path) -> list[Case]:
    """Every case of a file or folder; case ids must be unique across it."""
    cases: list[Case] = []
    seen: dict[str, Path] = {}
    for file in corpus_files(path):
        for case in load_file(file):
            if case.id in seen:
                raise CorpusError(f"{file}: case {case.id!r} repeats an id from {seen[case.id]}")
            seen[case.id] = file
            cases.append(case)
    return cases
