"""What the conversation is about: the documents whose titles its recent text names.

Many documents share their questions and differ only in their subject ("Is there parking?" in forty
hotels' FAQs), so the subject is resolved before ranking. A document is named in a text when a run of
its title's words appears there in order (a compound written apart, "dragon eats" for "DragonEats",
counts). Words count by their rarity across the documents, so a title's distinctive words ("Grant")
weigh and its common ones ("Hotel", a city, an area every document mentions) barely do: a mention must
carry a rare word and most of the title's weight. Newer text counts more (``DECAY`` per turn back);
the summary and the ledger's values count as the oldest text.

A pure function of the texts and the :class:`~appliance.knowledge.index.Index`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from appliance.knowledge.index import Index, words

DECAY = 0.8  # weight of a mention one turn further back
MIN_RUN = 0.5  # least weight of a run of title words, as a share of the rarest word's possible weight
MIN_MASS = 0.7  # least weight of all runs of one title, likewise
MIN_COVER = 0.7  # least share of the title's weight that its runs carry
MAX_SUBJECTS = 3
NEAR_BEST = 0.5  # a subject counts only with at least this share of the best one's score


@dataclass(frozen=True)
class Subject:
    doc: str
    score: float  # 0..1: how fully and how recently the conversation names it


def resolve(index: Index, texts: Sequence[str]) -> tuple[Subject, ...]:
    """The documents ``texts`` (newest first) are about, best first (at most ``MAX_SUBJECTS``)."""
    if not index.titles:
        return ()
    scores: dict[str, float] = {}
    for age, text in enumerate(texts):
        weight = DECAY**age
        for doc, cover in mentions(index, text).items():
            scores[doc] = max(scores.get(doc, 0.0), cover * weight)
    if not scores:
        return ()
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    best = ranked[0][1]
    return tuple(Subject(doc, score) for doc, score in ranked[:MAX_SUBJECTS] if score >= NEAR_BEST * best)


def mentions(index: Index, text: str) -> dict[str, float]:
    """Each document whose title ``text`` names, with the share of the title's weight it names (0..1)."""
    said = words(text)
    if not said:
        return {}
    top = max(index.rarity(""), 1e-9)  # the weight of a word found in one document only
    at: dict[str, list[int]] = {}
    for i, word in enumerate(said):
        at.setdefault(word, []).append(i)
    joined = {said[i] + said[i + 1] for i in range(len(said) - 1)}
    candidates: set[str] = set()
    for word in set(said) | joined:
        candidates |= index.by_title_word.get(word, frozenset())
    found: dict[str, float] = {}
    for doc in candidates:
        title = index.titles[doc]
        weight = [index.rarity(w) / top for w in title]
        covered = _covered(title, weight, said, at, joined)
        mass = sum(weight[j] for j in covered)
        total = sum(weight)
        if covered and mass >= MIN_MASS and total and mass / total >= MIN_COVER:
            found[doc] = mass / total
    return found


def _covered(
    title: tuple[str, ...], weight: list[float], said: list[str], at: dict[str, list[int]], joined: set[str]
) -> set[int]:
    """The positions of ``title``'s words found in ``said`` in runs that carry at least ``MIN_RUN``."""
    covered: set[int] = set()
    for start, word in enumerate(title):
        if word in joined and weight[start] >= MIN_RUN:
            covered.add(start)
        for i in at.get(word, ()):
            length = 0
            while start + length < len(title) and i + length < len(said) and said[i + length] == title[start + length]:
                length += 1
            run = range(start, start + length)
            if sum(weight[j] for j in run) >= MIN_RUN:
                covered.update(run)
    return covered
