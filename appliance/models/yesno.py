"""Yes or no as a probability: whether an answer would open with a yes rather than a no, read from
the logits of its first token (how the responder judges whether the placed passages answer a
question, ``knowledge.min_answerable``), for the single context and the batched one alike.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

# The token ids that say yes, and those that say no, as a whole first word.
Words = tuple[tuple[int, ...], tuple[int, ...]]


def answer_words(tokenize: Callable[[str], tuple[int, ...]]) -> Words | None:
    """The ids of the one-token forms of yes and of no under ``tokenize`` (with and without a leading
    space and a capital); None when either has none, or the two share an id."""
    found = []
    for word in ("yes", "no"):
        forms = {word, word.capitalize(), word.upper(), " " + word, " " + word.capitalize()}
        ids = {ids[0] for ids in (tokenize(f) for f in forms) if len(ids) == 1}
        found.append(tuple(sorted(ids)))
    yes, no = found
    return (yes, no) if yes and no and not set(yes) & set(no) else None


def yes_share(logits: np.ndarray, words: Words) -> float:
    """The probability of ``words``' yes ids among its yes and no ids, from a token's ``logits``."""
    yes, no = (logits[list(ids)].astype(np.float64) for ids in words)
    top = max(yes.max(), no.max())
    p_yes, p_no = np.exp(yes - top).sum(), np.exp(no - top).sum()
    return float(p_yes / (p_yes + p_no))
