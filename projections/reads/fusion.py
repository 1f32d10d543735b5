"""One ranking from several ranked lists of the same kind of hit: by rank or by score.

Recall ranks messages from more than one list — the lexical match, the semantic (embedding)
list and, for a question naming a time, the messages said then.
:func:`fuse` is reciprocal rank fusion: it reads only ranks, never the lists' scores, so lists
scored on different scales combine without calibration (Cormack, Clarke and Büttcher, SIGIR
2009). :func:`combine` reads the scores of two lists whose scales it can place (BM25 against
its best, a cosine between its list's last and first): recall's lexical and semantic lists of
messages. :func:`with_neighbours` raises each scored item by the best other item of its group
(a message by its session).

``fused(item) = sum over the lists holding it of 1 / (K + rank)``, rank counted from 1. With
:data:`K` = 60 (the paper's constant) the first place of one list is worth 1/61, and an item
found by two lists outranks one found at the top of only one unless it sits far down both.
Pure: no I/O, no clock, and ties keep the order of first appearance, so the same lists always
fuse the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

K = 60
"""The rank offset: larger flattens the difference between the top places of a list."""

H = TypeVar("H", bound=Hashable)


def fuse(
    lists: Sequence[Sequence[H]], *, k: int = K, weights: Sequence[float] | None = None
) -> list[tuple[H, float]]:
    """Every item of ``lists`` once, with its fused score, best first; ties in the order the
    items first appear (list by list, rank by rank). An item twice in one list counts at its
    first place there. ``weights`` (one per list, default 1 each) scale each list's
    contribution, ``weight / (k + rank)``: a list known to be weaker counts for less (the
    semantic list of recall, docs/retrieval.md) without being ignored."""
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    if weights is None:
        weights = [1.0] * len(lists)
    if len(weights) != len(lists) or any(w < 0 for w in weights):
        raise ValueError("weights must be one non-negative number per list")
    scores: dict[H, float] = {}
    for ranked, weight in zip(lists, weights, strict=True):
        seen: set[H] = set()
        for rank, item in enumerate(ranked, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    order = {item: index for index, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda pair: (-pair[1], order[pair[0]]))


def ranks(ranked: Sequence[H]) -> dict[H, int]:
    """Each item's place in ``ranked``, from 1 (its first, if it appears twice)."""
    places: dict[H, int] = {}
    for rank, item in enumerate(ranked, start=1):
        places.setdefault(item, rank)
    return places


def combine(
    lexical: Sequence[tuple[H, float]],
    semantic: Sequence[tuple[H, float]],
    *,
    semantic_weight: float,
) -> list[tuple[H, float]]:
    """One ranking of two scored lists by their scores, each scaled to 0…1 within the list:
    a lexical score divided by the list's best (BM25 has no upper bound, and 0 means no word
    shared), a semantic score (a cosine) placed between the list's last and its first
    (``(s - last) / (first - last)``, so the last candidate counts 0). An item's score is its
    lexical part plus ``semantic_weight`` times its semantic part; an item missing from a list
    scores 0 there. Best first; ties in the order the items first appear (lexical list first).

    Why scores and not ranks here: reciprocal rank fusion gives the tenth lexical hit nearly
    the first one's weight, while a question's BM25 scores often fall off a cliff after one or
    two messages, and a cosine says how near the nearest really is."""
    scores: dict[H, float] = {}
    best = max((s for _, s in lexical), default=0.0)
    for item, score in lexical:
        if item not in scores and best > 0:
            scores[item] = score / best
    if semantic:
        first, last = semantic[0][1], semantic[-1][1]
        spread = first - last
        seen: set[H] = set()
        for item, score in semantic:
            if item in seen:
                continue
            seen.add(item)
            part = (score - last) / spread if spread > 0 else 1.0
            scores[item] = scores.get(item, 0.0) + semantic_weight * part
    order = {item: index for index, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda pair: (-pair[1], order[pair[0]]))


def with_neighbours(
    scored: Sequence[tuple[H, float]], group_of: Callable[[H], Hashable], *, weight: float
) -> list[tuple[H, float]]:
    """``scored`` re-ranked with the evidence of each item's group: an item's score plus
    ``weight`` times the best score of *another* item of its group (0 when it is alone there).
    Best first; ties in ``scored``'s order.

    Recall's groups are sessions: a conversation is about something for a while, so a message
    whose session holds other strong hits for the question is likelier to answer it than one as
    strong on its own in a session that holds nothing else (the session as a prior for its
    messages: score a session by its best-matching turn, arXiv 2606.04194). Only another
    item's score counts, so the best item of a session is not raised by itself, and a session
    of one hit is not raised at all."""
    best: dict[Hashable, list[float]] = {}
    for item, score in scored:
        top = best.setdefault(group_of(item), [])
        top.append(score)
        top.sort(reverse=True)
        del top[2:]
    raised: list[tuple[H, float]] = []
    for item, score in scored:
        top = best[group_of(item)]
        other = 0.0 if len(top) < 2 else top[1] if top[0] == score else top[0]
        raised.append((item, score + weight * other))
    order = {item: index for index, (item, _) in enumerate(scored)}
    return sorted(raised, key=lambda pair: (-pair[1], order[pair[0]]))
