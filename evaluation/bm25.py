"""Okapi BM25 over a handful of documents: the baseline recall is measured against.

The formula of ``rank_bm25.BM25Okapi`` (Robertson and Zaragoza, "The Probabilistic Relevance
Framework", 2009; the library's defaults ``k1 = 1.5``, ``b = 0.75``): a term's weight is
``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg_len))``, with
``idf = ln((N - df + 0.5) / (df + 0.5))`` and a term in more than half the documents (negative
idf) floored at ``epsilon`` times the mean idf. Written out here rather than added as a
dependency: the library is a few lines of this over numpy, and an evaluation command should not
pull numpy into the server's install. Tokens are case-folded runs of letters and digits, no
stemming and no stop words (idf weighs those down): a plain baseline, not a tuned one.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

_WORD = re.compile(r"[^\W_]+")


def tokens(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


class BM25:
    """Scores of a query against fixed documents (each a list of tokens)."""

    def __init__(
        self,
        documents: Sequence[Sequence[str]],
        *,
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
    ) -> None:
        self._k1, self._b = k1, b
        self._tf = [Counter(doc) for doc in documents]
        self._len = [len(doc) for doc in documents]
        count = len(documents)
        self._avg = sum(self._len) / count if count else 0.0
        df: Counter[str] = Counter()
        for doc in self._tf:
            df.update(doc.keys())
        idf = {t: math.log(count - n + 0.5) - math.log(n + 0.5) for t, n in df.items()}
        floor = epsilon * (sum(idf.values()) / len(idf)) if idf else 0.0
        self._idf = {t: (v if v >= 0 else floor) for t, v in idf.items()}

    def scores(self, query: Sequence[str]) -> list[float]:
        k1, b, avg = self._k1, self._b, self._avg or 1.0
        result = []
        for tf, length in zip(self._tf, self._len, strict=True):
            score = 0.0
            for term in query:
                f = tf.get(term, 0)
                if f:
                    score += self._idf[term] * f * (k1 + 1) / (f + k1 * (1 - b + b * length / avg))
            result.append(score)
        return result

    def top(self, query: Sequence[str], k: int) -> list[int]:
        """The indexes of the ``k`` best documents with a positive score, best first (ties:
        the earlier document)."""
        scored = [(s, i) for i, s in enumerate(self.scores(query)) if s > 0]
        scored.sort(key=lambda pair: (-pair[0], pair[1]))
        return [i for _, i in scored[:k]]
