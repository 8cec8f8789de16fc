"""What the conversation is about: the documents whose names its recent text says.

Many documents share their questions and differ only in their subject ("Is there parking?" in forty
hotels' FAQs), so the subject is resolved before ranking. A document's name is its title, in two parts:
the core (up to the first " - ", "(", "," or ":") and a qualifier ("Rooster & Rice - Union Square":
"rooster and rice", "union square"). Texts and titles are compared as :func:`~.words.words` (spoken
numbers, spelled letters, plurals).

* **A mention.** A text names a document when it carries most of its core's weight (``MIN_COVER``)
  and enough in all (``MIN_MASS``): the core's words, and its adjacent pairs, each weighted by how
  rare it is across the documents' text. A word every document has ("hotel", the city) weighs
  nothing; a pair weighs what it adds to its rarer word, so "inn san francisco" names the Inn San
  Francisco although each of its words is common, and "orchard garden hotel" does not name the
  Orchard Hotel. A name of several words needs one of its pairs said in order.
* **The longest name wins.** In "alamo square seafood grill", the Alamo Square Seafood Grill is named,
  not Alamo Square.
* **An attribute is not a subject.** A name that the other named document's own text contains
  ("Hotel Nikko ... it's in union square", where the hotel's document says "Area: Union Square")
  counts ``ATTRIBUTE`` as much.
* **Newer counts more**: ``DECAY`` per turn back; the summary and the ledger's values come last.
  Between names said in the same turn, the one said again in part later (a garbled "super j berens"
  for "Super Duper Burgers") and the one whose qualifier the conversation mentions anywhere (the
  area asked for) come first.

Pure functions of the texts and the :class:`Names` table, which the index builds once.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from appliance.knowledge.words import key, words

DECAY = 0.85  # weight of a mention one turn further back
MIN_COVER = 0.7  # least share of the core's weight a mention carries
MIN_MASS = 0.6  # least weight of a mention, as a share of a word found in one document only
ATTRIBUTE = 0.5  # a name another named document's text contains
PARTIAL = 0.05  # weight of a part of a name said in a turn, between names said alike
QUALIFIER = 0.1  # weight of a qualifier said anywhere in the conversation, likewise
MAX_SUBJECTS = 3
NEAR_BEST = 0.5  # a subject counts only with at least this share of the best one's score

_SEPARATOR = re.compile(r"\s+[-–—|:]\s+|\s*[(\[,]\s*")


@dataclass(frozen=True)
class Subject:
    doc: str
    score: float  # 0..1: how fully and how recently the conversation names it


@dataclass(frozen=True)
class Name:
    """A document's title as it is looked for: its core and qualifier words, and the weight of each
    word and then each adjacent pair of them."""

    core: tuple[str, ...]
    qualifier: tuple[str, ...]
    core_weights: tuple[float, ...]
    qualifier_weights: tuple[float, ...]


@dataclass(frozen=True)
class Names:
    """Every document's name, and what resolution needs to know about them."""

    names: Mapping[str, Name]
    by_word: Mapping[str, frozenset[str]]  # a word a mention must say (:func:`_keys`) -> its documents
    top: float  # the weight of a unit found in one document only
    inside: Mapping[str, frozenset[str]]  # document -> those whose core holds its core as a run
    attribute_of: Mapping[str, frozenset[str]]  # document -> those whose text says its core
    # The mentions of texts seen lately: a session's recent turns are read again at every turn.
    seen: dict[str, dict[str, tuple[float, float]]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def empty(cls) -> Names:
        return cls({}, {}, 0.0, {}, {})

    @classmethod
    def build(cls, titles: Mapping[str, str], texts: Mapping[str, Iterable[str]]) -> Names:
        """The names of documents (``titles``: document → title) with their texts (document → its
        chunks' texts), read once to weigh the names' words."""
        parts = {doc: _split(title) for doc, title in titles.items()}
        wanted = {u for core, qualifier in parts.values() for u in (*_units(core), *_units(qualifier))}
        phrases: dict[tuple[str, ...], set[str]] = defaultdict(set)
        for doc, (core, _) in parts.items():
            if core:
                phrases[core].add(doc)
        starts: dict[str, list[tuple[str, ...]]] = defaultdict(list)
        for phrase in phrases:
            starts[phrase[0]].append(phrase)
        frequency: dict[str, int] = defaultdict(int)
        attribute_of: dict[str, set[str]] = defaultdict(set)
        for doc in titles:
            said = words(titles[doc] + "\n" + "\n".join(texts.get(doc, ())))
            found = {w for w in said if w in wanted}
            found |= {p for p in (f"{a} {b}" for a, b in zip(said, said[1:])) if p in wanted}
            for unit in found:
                frequency[unit] += 1
            for i, word in enumerate(said):
                for phrase in starts.get(word, ()):
                    if tuple(said[i : i + len(phrase)]) == phrase:
                        for other in phrases[phrase] - {doc}:
                            attribute_of[other].add(doc)
        n = len(titles)

        def rarity(unit: str) -> float:
            return math.log((n + 1) / (frequency.get(unit, 0) + 1))

        names = {
            doc: Name(core, qualifier, _weights(core, rarity), _weights(qualifier, rarity))
            for doc, (core, qualifier) in parts.items()
        }
        by_word: dict[str, set[str]] = defaultdict(set)
        for doc, name in names.items():
            for word in _keys(name):
                by_word[word].add(doc)
        return cls(
            names=names,
            by_word={w: frozenset(ds) for w, ds in by_word.items()},
            top=math.log((n + 1) / 2),
            inside=_inside(names),
            attribute_of={doc: frozenset(others) for doc, others in attribute_of.items()},
        )


def _split(title: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    pieces = [p for p in _SEPARATOR.split(title) if p and p.strip()]
    if not pieces:
        return (), ()
    return tuple(words(pieces[0])), tuple(w for p in pieces[1:] for w in words(p))


def _units(seq: Sequence[str]) -> list[str]:
    """A name's words, then its adjacent pairs ("a b")."""
    return [*seq, *(f"{a} {b}" for a, b in zip(seq, seq[1:]))]


def _weights(seq: Sequence[str], rarity: Callable[[str], float]) -> tuple[float, ...]:
    """Each word's rarity, then each pair's rarity beyond its rarer word's."""
    pairs = [max(0.0, rarity(f"{a} {b}") - max(rarity(a), rarity(b))) for a, b in zip(seq, seq[1:])]
    return (*(rarity(w) for w in seq), *pairs)


def _keys(name: Name) -> set[str]:
    """The words of which a mention says one at least: the heaviest of the core's words, until those
    left weigh less than ``MIN_COVER`` of the whole, and its pairs written as one word ("dragoneats"),
    since a pair said that way counts though neither of its words is said."""
    words_ = list(zip(name.core_weights, name.core))
    total = sum(name.core_weights)
    rest = total
    keys: set[str] = set()
    for weight, word in sorted(words_, key=lambda item: -item[0]):
        if rest < MIN_COVER * total:
            break
        keys.add(word)
        rest -= weight
    return keys | {a + b for a, b in zip(name.core, name.core[1:])}


def _inside(names: Mapping[str, Name]) -> dict[str, frozenset[str]]:
    cores = {doc: f" {' '.join(n.core)} " for doc, n in names.items() if n.core}
    first: dict[str, set[str]] = defaultdict(set)
    for doc, name in names.items():
        for word in name.core:
            first[word].add(doc)
    found: dict[str, frozenset[str]] = {}
    for doc, core in cores.items():
        holders = {o for o in first[names[doc].core[0]] if o != doc and core in cores.get(o, "") and core != cores[o]}
        if holders:
            found[doc] = frozenset(holders)
    return found


@dataclass(frozen=True)
class _Said:
    """A text's words as mentions are looked for in them."""

    words: frozenset[str]  # its words, and each adjacent two written as one ("dragon eats")
    pairs: frozenset[str]  # its adjacent pairs, "a b"

    @classmethod
    def of(cls, text: str) -> _Said:
        said = words(text)
        joined = {a + b for a, b in zip(said, said[1:])} | {key(a + b) for a, b in zip(said, said[1:])}
        return cls(frozenset(said) | joined, frozenset(f"{a} {b}" for a, b in zip(said, said[1:])))

    def hits(self, seq: Sequence[str]) -> list[bool]:
        """Which of ``seq``'s units (:func:`_units`) are said."""
        found = [w in self.words for w in seq]
        for a, b in zip(seq, seq[1:]):
            found.append(f"{a} {b}" in self.pairs or a + b in self.words)
        return found


def _share(weights: Sequence[float], hits: Sequence[bool]) -> tuple[float, float]:
    """The weight said, and its share of the whole."""
    mass = sum(w for w, h in zip(weights, hits) if h)
    total = sum(weights)
    return mass, (mass / total if total else 0.0)


MEMO = 4096  # texts whose mentions are kept


def mentions(names: Names, text: str) -> dict[str, tuple[float, float]]:
    """Each document ``text`` names: the share of its core's weight said, and that weight (in units
    of a word found in one document only)."""
    found = names.seen.get(text)
    if found is None:
        if len(names.seen) >= MEMO:
            names.seen.clear()
        found = names.seen[text] = _mentions(names, text)
    return found


def _mentions(names: Names, text: str) -> dict[str, tuple[float, float]]:
    said = _Said.of(text)
    if not said.words or names.top <= 0:
        return {}
    candidates: set[str] = set()
    for word in said.words:
        candidates |= names.by_word.get(word, frozenset())
    found: dict[str, tuple[float, float]] = {}
    for doc in candidates:
        name = names.names[doc]
        hits = said.hits(name.core)
        if len(name.core) > 1 and not any(hits[len(name.core) :]):
            continue  # a name of several words is said in order, in part at least
        mass, cover = _share(name.core_weights, hits)
        if cover >= MIN_COVER and mass / names.top >= MIN_MASS:
            found[doc] = (cover, mass / names.top)
    whole = {doc for doc, (cover, _) in found.items() if cover >= 0.999}
    return {doc: v for doc, v in found.items() if not (doc in whole and names.inside.get(doc, frozenset()) & whole)}


def resolve(names: Names, texts: Sequence[str]) -> tuple[Subject, ...]:
    """The documents ``texts`` (newest first) are about, best first (at most ``MAX_SUBJECTS``)."""
    if not names.names:
        return ()
    scores: dict[str, float] = {}
    for age, text in enumerate(texts):
        for doc, (cover, mass) in mentions(names, text).items():
            scores[doc] = max(scores.get(doc, 0.0), cover * min(1.0, mass) * DECAY**age)
    if not scores:
        return ()
    for doc in list(scores):
        own = f" {' '.join(names.names[doc].core)} "
        holders = names.attribute_of.get(doc, frozenset())
        if any(
            o in scores and own not in f" {' '.join(names.names[o].core + names.names[o].qualifier)} " for o in holders
        ):
            scores[doc] *= ATTRIBUTE
    _tie_breaks(names, texts, scores)
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    best = ranked[0][1]
    return tuple(Subject(doc, min(1.0, s)) for doc, s in ranked[:MAX_SUBJECTS] if s >= NEAR_BEST * best)


def _tie_breaks(names: Names, texts: Sequence[str], scores: dict[str, float]) -> None:
    """Parts of a name said again, and its qualifier said anywhere, as small additions."""
    if len(scores) < 2:
        return
    said = [_Said.of(text) for text in texts]
    everything = _Said(frozenset().union(*(s.words for s in said)), frozenset().union(*(s.pairs for s in said)))
    for doc in scores:
        name = names.names[doc]
        partial = sum(DECAY**age * _share(name.core_weights, s.hits(name.core))[1] for age, s in enumerate(said))
        qualifier = _share(name.qualifier_weights, everything.hits(name.qualifier))[1] if name.qualifier else 0.0
        scores[doc] = (scores[doc] + PARTIAL * partial) * (1 + QUALIFIER * qualifier)


NAMING = 1.0  # least rarity (log) of a name's word left out of a question (not "the", "hotel")


def unnamed(names: Names, text: str, docs: Iterable[str]) -> str:
    """``text`` without the distinctive words of these documents' names ("is there parking at the
    museum" → "is there parking at the"): a question about the subject is then matched like the
    chunks' topics, which leave their document's name out too. ``text`` itself if nothing else is left."""
    drop: set[str] = set()
    for doc in docs:
        name = names.names.get(doc)
        if name is not None:
            drop |= {w for w, weight in zip(name.core, name.core_weights) if weight >= NAMING}
    if not drop:
        return text
    kept = [t for t in text.split() if not (set(words(t)) and set(words(t)) <= drop)]
    return " ".join(kept) or text
