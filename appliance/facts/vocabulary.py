"""The configurable cues of facts/, compiled once: what an agent asks for, and how a customer asks
to hear a fact again.

Built from every lexicon (:mod:`appliance.lexicon`) with the settings' changes
(``facts.request_cues``, ``facts.readback_cues``): a language's list given there replaces the
built-in one (an empty list turns it off), and new languages are added. It carries which secrets are
masked too (``privacy.mask_kinds``, ``privacy.patterns``). :meth:`Vocabulary.build`
compiles the patterns; build it once where the settings are read and hand it to the functions that
take ``cues=``. :data:`DEFAULT` is the built-in lexicons alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from appliance.facts.secrets import ALL, Masking
from appliance.lexicon import LEXICONS
from appliance.lexicon.text import fold, phrase_form, straight
from appliance.types import READBACK_TOPICS

# language → request kind → phrases (``facts.request_cues``).
RequestCues = Mapping[str, Mapping[str, Sequence[str]]]
# language → read-back topic, or "request", → phrases (``facts.readback_cues``).
ReadBackCues = Mapping[str, Mapping[str, Sequence[str]]]

_NEVER = "(?!)"


@dataclass(frozen=True)
class RequestPatterns:
    """The request cues of every language as one pattern over :func:`~appliance.lexicon.text.phrase_form`
    text, and the kinds each matched phrase asks for; ``compound`` finds the one-word cues of the
    languages that join nouns at the end of a longer word ("Vertragskontonummer")."""

    pattern: re.Pattern[str]
    kinds_of: Mapping[str, frozenset[str]]
    compound: re.Pattern[str] = re.compile(_NEVER)
    tails: frozenset[str] = frozenset()
    plurals: tuple[str, ...] = ()
    """Every language's plural endings, longest first: a cue found in the plural is looked up without."""
    nouns: tuple[tuple[str, re.Pattern[str]], ...] = ()
    """Per kind, its nouns (``requests.nouns``) as one pattern: in a sentence that asks, a request."""
    who: re.Pattern[str] = re.compile(_NEVER)
    """The questions for the customer's name that name no noun of it (``requests.who``)."""

    def kinds(self, text: str) -> Iterator[str]:
        """The kinds asked for by the cues in ``text``, once per cue found, then by the nouns of kinds
        that no cue stands over, then a name by a question for who the customer is. Where two cues
        overlap the longer one counts ("votre nom d'utilisateur" asks for a username, not a name)."""
        folded = phrase_form(text)
        kept = self._cues(folded)
        for _, _, cue in sorted(kept):
            yield from self.kinds_of.get(cue) or self._singular(cue)
        for kind, pattern in self.nouns:
            for m in pattern.finditer(folded):
                if not any(m.start() < e and s < m.end() for s, e, _ in kept) and _noun_asks(kind, folded, m):
                    yield kind
        if self.who.search(straight(text.casefold()).strip()):
            yield "name"

    def _cues(self, folded: str) -> list[tuple[int, int, str]]:
        """The spans of the cues in ``folded`` text, the longer of two that overlap."""
        compound = self.tails and _ends_in(folded, self.tails)  # a cheap test first: the pattern tries every letter
        found = sorted(
            (
                (m.start(), m.start() + len(m[1]), m[1])
                for pattern in ((self.pattern, self.compound) if compound else (self.pattern,))
                for m in pattern.finditer(folded)
            ),
            key=lambda span: span[0] - span[1],
        )
        kept: list[tuple[int, int, str]] = []
        for start, end, cue in found:
            if not any(start < e and s < end for s, e, _ in kept):
                kept.append((start, end, cue))
        return kept

    def _singular(self, cue: str) -> frozenset[str]:
        """The kinds of a cue found with its first or last word in the plural ("ticket numbers")."""
        words = cue.split()
        for i in dict.fromkeys((0, len(words) - 1)):
            for end in self.plurals:
                if words[i].endswith(end):
                    key = " ".join(w[: -len(end)] if j == i else w for j, w in enumerate(words))
                    if key in self.kinds_of:
                        return self.kinds_of[key]
        return frozenset()


@dataclass(frozen=True)
class ReadBackPatterns:
    """The read-back cues, compiled for text folded with :func:`readback_form`: ``topics`` has one
    named group per topic; a language's ``request`` cue is enough, its ``again`` cue only with
    its ``asking`` word; ``first`` asks for the first value given, ``earlier`` for older values."""

    topics: re.Pattern[str]
    request: tuple[tuple[str, re.Pattern[str]], ...]
    again: tuple[tuple[str, re.Pattern[str], re.Pattern[str]], ...]
    first: re.Pattern[str]
    earlier: re.Pattern[str]

    def language(self, sentence: str) -> str | None:
        """The language of the request cue in ``sentence``, or None when it asks for nothing said before."""
        for lang, strong in self.request:
            if strong.search(sentence):
                return lang
        for lang, weak, asking in self.again:
            if weak.search(sentence) and asking.search(sentence):
                return lang
        return None


@dataclass(frozen=True)
class Vocabulary:
    """Everything configurable that facts/ matches, compiled: pass it as ``cues=``. ``masking``: the
    secrets masked (``privacy.mask_kinds``, ``privacy.patterns``); ``region``: where a phone number
    without a country code belongs (``facts.region``; empty: the conversation's first international
    number's country, else :data:`~appliance.facts.phones.DEFAULT_REGION`)."""

    requests: RequestPatterns
    readback: ReadBackPatterns
    masking: Masking = ALL
    region: str = ""

    @classmethod
    def build(
        cls,
        request_cues: RequestCues | None = None,
        readback_cues: ReadBackCues | None = None,
        masking: Masking = ALL,
        region: str = "",
    ) -> Vocabulary:
        """The lexicons' cues with ``request_cues`` and ``readback_cues`` (the settings') merged in."""
        return cls(_requests(request_cues or {}), _readback(readback_cues or {}), masking, region)


def readback_form(text: str) -> str:
    """Lower case, without accents, one kind of apostrophe: the form read-back cues are written in."""
    return fold(straight(text))


def _merged(
    builtin: Mapping[str, Mapping[str, Sequence[str]]], configured: Mapping[str, Mapping[str, Sequence[str]]]
) -> dict[str, dict[str, tuple[str, ...]]]:
    table = {lang: {key: tuple(v) for key, v in keys.items()} for lang, keys in builtin.items()}
    for lang, keys in configured.items():
        mine = table.setdefault(lang, {})
        for key, values in keys.items():
            mine[key] = tuple(values)
    return table


def _requests(configured: RequestCues) -> RequestPatterns:
    table = _merged({code: lex.requests.cues for code, lex in LEXICONS.items()}, configured)
    kinds_of: dict[str, set[str]] = {}
    tails: set[str] = set()
    plural: dict[str, str] = {}  # each phrase as a pattern, its first and last word in the plural too
    for lang, kinds in table.items():
        compounding = lang in LEXICONS and LEXICONS[lang].compounding
        plurals = LEXICONS[lang].requests.plurals if lang in LEXICONS else ()
        for kind, cues in kinds.items():
            for cue in cues:
                phrase = phrase_form(cue)
                if phrase:
                    kinds_of.setdefault(phrase, set()).add(kind)
                    plural[phrase] = _with_plurals(phrase, plurals)
                    # short cues would end unrelated words ("tan" in "spontan")
                    if compounding and " " not in phrase and len(phrase) >= 6:
                        tails.add(phrase)
    endings = sorted({end for lex in LEXICONS.values() for end in lex.requests.plurals}, key=len, reverse=True)
    # a lookahead finds every cue, overlapping ones included, for ``kinds`` to keep the longest
    by_length = sorted(plural, key=len, reverse=True)
    return RequestPatterns(
        re.compile(r"(?<!\w)(?=(" + ("|".join(plural[p] for p in by_length) or _NEVER) + r")(?!\w))"),
        {p: frozenset(k) for p, k in kinds_of.items()},
        re.compile(r"(?<=\w)(?=(" + _longest_first(tails) + r")(?!\w))"),
        frozenset(tails),
        tuple(endings),
        _nouns(configured),
        _who(configured),
    )


def _nouns(configured: RequestCues) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Each kind's nouns in every language, with the language's plural endings; a kind whose cues
    the settings give for a language (an empty list turns them off) has no nouns there."""
    words: dict[str, list[str]] = {}
    for code, lex in LEXICONS.items():
        end = "(?:" + "|".join(map(re.escape, lex.requests.plurals)) + ")?" if lex.requests.plurals else ""
        for kind, nouns in lex.requests.nouns.items():
            if kind not in configured.get(code, {}):
                words.setdefault(kind, []).extend(f"(?:{noun}){end}" for noun in nouns)
    return tuple(
        (kind, re.compile(r"(?<![\w'])(?:" + "|".join(found) + r")(?![\w'])")) for kind, found in words.items()
    )


def _who(configured: RequestCues) -> re.Pattern[str]:
    found = [q for code, lex in LEXICONS.items() if "name" not in configured.get(code, {}) for q in lex.requests.who]
    return re.compile("|".join(f"(?:{q})" for q in found) or _NEVER)


def _plain(words: Iterable[str]) -> frozenset[str]:
    return frozenset(phrase_form(w) for w in words if re.fullmatch(r"[^\W\d_]+(?:'[^\W\d_]+)?", w))


# What may stand before a name's noun that asks for the customer's: common words, articles, question
# words and the listener's ("what name", "the name", "ur name"), not another noun ("company name").
_BEFORE_NOUN = _plain(
    w
    for lex in LEXICONS.values()
    for w in (*lex.names.common_words, *lex.names.not_names, *lex.requests.listeners, *lex.names.leads)
)
# Words of what a name's noun is of ("the name of the hotel"), and the identifiers whose name it may
# be all the same ("the name on the card", "der Name auf der Karte").
_OF = _plain(w for lex in LEXICONS.values() for w in (*lex.entities.qualifiers, *lex.requests.of_words))
_ID_WORD = re.compile(
    "(?:"
    + "|".join(
        p
        for lex in LEXICONS.values()
        for p in (
            *(p for labels in lex.entities.labels.values() for p in labels),
            *lex.entities.card_words,
            *lex.entities.username_labels,
            *(n for kind, nouns in lex.requests.nouns.items() if kind != "name" for n in nouns),
        )
    )
    + ")s?"
)


def _noun_asks(kind: str, folded: str, m: re.Match[str]) -> bool:
    """Whether the noun ``m`` of ``kind`` in ``folded`` text asks for the customer's. A name's noun
    does not after another's ("your pet's name", "mother's maiden name") or another noun ("company
    name", "driver name"), nor before a word of what it is of unless that is an identifier ("the name
    of the hotel"; "the name on the card" asks)."""
    if kind != "name":
        return True
    before = folded[: m.start()].split()
    if before and (before[-1].endswith(("'s", "s'")) or before[-1] not in _BEFORE_NOUN):
        return False
    after = folded[m.end() :].split()[:4]
    if after and after[0] in _OF:
        return any(_ID_WORD.fullmatch(w) for w in after[1:])
    return True


def _with_plurals(phrase: str, plurals: Sequence[str]) -> str:
    """``phrase`` as a pattern that its first or last word in the plural matches too, by the
    language's plain endings ("ticket numbers", "números de ticket")."""
    words = [re.escape(w) for w in phrase.split()]
    if not plurals:
        return " ".join(words)
    end = "(?:" + "|".join(map(re.escape, plurals)) + ")?"
    words[0] += end
    if len(words) > 1:
        words[-1] += end
    return " ".join(words)


def _ends_in(text: str, tails: frozenset[str]) -> bool:
    """Whether a word of ``text`` ends in one of ``tails`` after a letter or more."""
    shortest = min(map(len, tails))
    return any(w[i:] in tails for w in text.split() if len(w) > shortest for i in range(1, len(w) - shortest + 1))


def _longest_first(phrases: Iterable[str]) -> str:
    """Phrases as the body of an alternation, longest first: "pin number" is one cue, not "pin" and a word."""
    alternatives = sorted(phrases, key=len, reverse=True)
    return "|".join(re.escape(p) for p in alternatives) if alternatives else _NEVER


def _as_pattern(phrases: Sequence[str]) -> str:
    """Configured phrases as one pattern in read-back form, words separated by any spaces."""
    words = [readback_form(p).split() for p in phrases]
    return "|".join(r"\s+".join(re.escape(w) for w in phrase) for phrase in words if phrase)


def _bounded(pattern: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w-])(?:" + (pattern or _NEVER) + r")(?![\w-])")


def _readback(configured: ReadBackCues) -> ReadBackPatterns:
    builtin = {
        code: {**lex.readback.topics, "request": "|".join(lex.readback.request)}
        for code, lex in LEXICONS.items()
        if lex.readback.topics or lex.readback.request
    }
    table = _merged(
        {code: {key: (pattern,) for key, pattern in keys.items()} for code, keys in builtin.items()},
        {lang: {key: (_as_pattern(phrases),) for key, phrases in keys.items()} for lang, keys in configured.items()},
    )
    groups = []
    for topic in READBACK_TOPICS:
        words = "|".join(p for keys in table.values() for p in keys.get(topic, ()) if p)
        groups.append(f"(?P<{topic}>{words or _NEVER})")
    request = tuple((lang, _bounded("|".join(keys.get("request", ())))) for lang, keys in table.items())
    again = tuple(
        (code, _bounded("|".join(lex.readback.again)), _bounded("|".join(lex.readback.asking)))
        for code, lex in LEXICONS.items()
        if lex.readback.again and lex.readback.asking
    )
    first = _bounded("|".join(p for lex in LEXICONS.values() for p in lex.readback.first))
    earlier = _bounded("|".join(p for lex in LEXICONS.values() for p in lex.readback.earlier))
    return ReadBackPatterns(_bounded("|".join(groups)), request, again, first, earlier)


DEFAULT = Vocabulary.build()

# What a function of facts/ takes as ``cues``: the compiled vocabulary; None for :data:`DEFAULT`; or,
# until every caller builds the vocabulary once, the settings' ``facts.request_cues`` as a mapping.
Cues = Vocabulary | RequestCues | None


def vocabulary(cues: Cues) -> Vocabulary:
    """``cues`` as a compiled vocabulary: itself; :data:`DEFAULT` for None or an empty mapping; or,
    for the settings' ``facts.request_cues`` as a mapping (what callers passed before the vocabulary
    was built once at the root), that mapping compiled once and cached."""
    if isinstance(cues, Vocabulary):
        return cues
    if not cues:
        return DEFAULT
    return _compiled(
        tuple((lang, tuple((kind, tuple(v)) for kind, v in kinds.items())) for lang, kinds in cues.items())
    )


@lru_cache(maxsize=8)
def _compiled(frozen: tuple[tuple[str, tuple[tuple[str, tuple[str, ...]], ...]], ...]) -> Vocabulary:
    return Vocabulary.build(request_cues={lang: dict(kinds) for lang, kinds in frozen})
