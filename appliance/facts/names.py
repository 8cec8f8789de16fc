"""Names of people: after a cue ("my name is", "this is", "Mr."), and without one, where a customer
answers a request for their name, opens a message with it or signs it ("Yes, Sarah Brown.",
"Katarina Miller, there has been ...", "Oluwaseun Adeyemi here", "... get a refund? Tomasz Wierzbicki").

Case does not decide a name where its place does: after a cue that always introduces one ("my name
is mei lin chen"), in a reply to a request for it ("mei lin chen", "DARIUS OKONKWO") and in a
signature after a sign-off ("thanks, olumide bakare"), a name counts in lower case or capitals, and
the lexicons' common words ("and", "need", "pas") end it or rule it out. Elsewhere a name starts
with a capital, as before. The ledger keeps a name as it was written; its norm is lower case.

No model: the registry has no named-entity model that ships its weights and runs offline with
onnxruntime (docs/facts.md says which were tried), so names are found by their shape: runs of
capitalised words, or of words of a script without case (Arabic, Chinese, Hindi), with the
particles of many naming traditions ("van der", "de la", "bin") and the apostrophes and hyphens
inside names ("O'Connor", "Jean-Luc"). What keeps ordinary capitalised words out is a list of the
words that start sentences, greetings, weekdays, months and the words of places and products
("Hotel", "Street", "Visa"), never a list of given names or surnames: "Nguyen Van An" is found the
same way as "Sarah Brown". The cues and words of each language are in its lexicon
(:mod:`appliance.lexicon`); "this is Tom" and "Name: Tom" are read in English only.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from appliance.facts.text import MONTHS, WEEKDAYS, capitalised
from appliance.lexicon import LEXICONS, Names, each, either
from appliance.lexicon.text import fold

Add = Callable[[str, int, int, str], None]  # kind, start, end, norm

NAME_WORD = r"[^\W\d_][^\W\d_'’-]*(?:[-'’][^\W\d_]+)*"
PARTICLES = frozenset(p for lexicon in LEXICONS.values() for p in lexicon.names.particles)
_PARTICLE = "(?:" + "|".join(sorted(PARTICLES)) + ")"
# Up to three words, with particles between them ("Jan van der Berg", "José Luis de la Cruz").
_NAME_BODY = rf"(?P<name>{NAME_WORD}(?:\s+(?:{_PARTICLE}\s+){{0,2}}{NAME_WORD}){{0,2}})"


def _either(pick: Callable[[Names], tuple[str, ...]]) -> str:
    return either(lambda lexicon: pick(lexicon.names))


def _words(pick: Callable[[Names], tuple[str, ...]]) -> frozenset[str]:
    return frozenset(w for lexicon in LEXICONS.values() for w in pick(lexicon.names))


def _unspaced(cue: str) -> bool:
    """Whether ``cue`` ends in a script written without spaces between words ("我叫王小明")."""
    return unicodedata.east_asian_width(cue[-1]) in "WF"


# First-person cues: the name that follows is the speaker's own. Scripts without spaces between
# words need none after the cue.
_SELF_CUES = [cue for lexicon in LEXICONS.values() for cue in lexicon.names.self_cues]
_NAME_CUES = re.compile(
    r"(?<!\w)(?:(?i:"
    + "|".join(c for c in _SELF_CUES if not _unspaced(c))
    + r")\s+|(?:"
    + "|".join(c for c in _SELF_CUES if _unspaced(c))
    + r")\s*)"
    + _NAME_BODY
)
# The cues that always introduce a name: after them case does not decide ("my name is mei lin chen").
_FIRM_CUES = re.compile(r"(?<!\w)(?i:" + _either(lambda n: n.firm_cues) + r")\s+" + _NAME_BODY)
# "Name: Sarah Brown", "Full name is Sarah Brown": a label at the start of a clause.
_NAME_LABEL = re.compile(r"(?:^|(?<=[.!?,;:\n]))\s*(?i:(?:full\s+)?name\s*(?:is|:))\s*" + _NAME_BODY)
# Second-person cues: the name that follows is the listener's ("your name is Dana", from an agent).
_YOUR_NAME = re.compile(r"(?<!\w)(?i:" + _either(lambda n: n.your_cues) + r")\s*:?\s+" + _NAME_BODY)
# "This is Tom" introduces someone only at the start of a sentence or after a greeting, and only
# when the name ends the clause ("this is Tom from billing", not "this is Holy Trinity Church").
_THIS_IS = re.compile(
    r"(?:^|[.!?,;]\s*|(?i:hi|hello|hey|good\s+(?:morning|afternoon|evening))\W+)(?i:this\s+is)\s+"
    r"(?P<name>" + NAME_WORD + r"(?:\s+" + NAME_WORD + r")?)(?=\s*(?:[,.!?;]|$|(?i:from|speaking|here|with|at)\b))"
)
# "Oluwaseun Adeyemi here", "Tom speaking": a clause of its own, at the start of the message or a sentence.
_HERE = re.compile(
    r"(?:^|[.!?;]\s+|(?i:" + _either(lambda n: n.greetings) + r")\W+)"
    r"(?P<name>" + NAME_WORD + r"(?:\s+" + NAME_WORD + r"){0,2})\s+(?i:" + _either(lambda n: n.here) + r")"
    r"(?=\s*(?:[,.!?;:]|$))"
)
_TITLES = r"(?:" + _either(lambda n: n.titles) + r")"
_HONORIFIC = re.compile(r"(?<!\w)" + _TITLES + r"\.?\s+" + _NAME_BODY)
# A name spoken to: after a greeting or thanks, or alone between commas, then the end of the clause
# ("Thanks, Dana.", "Mr. Smith, your order..."), unlike one spoken of ("your appointment with Dr. Johnson").
_ADDRESSING = _either(lambda n: n.addressing)
_BEFORE_ADDRESSEE = re.compile(
    r"(?:^|[,;:.!?]|(?i:(?<!\w)(?:" + _ADDRESSING + "|" + _either(lambda n: n.assent) + r")))\s*$"
)
_TITLE_BEFORE = re.compile(r"(?<!\w)" + _TITLES + r"\.?\s+$")
_AFTER_ADDRESSEE = re.compile(r"\s*(?:$|[,.!?;:])")
_GREETING_NAME = re.compile(
    r"(?i:(?<!\w)(?:" + _ADDRESSING + r"))"
    r",?\s+(?P<name>" + NAME_WORD + r"(?:\s+" + NAME_WORD + r"){0,2})(?=\s*[,.!?;]|\s*$)"
)

# Words that follow "I'm", "this is", "thanks," without being a name.
_NOT_NAMES = _words(lambda n: n.not_names)
# Later words of a name may be short words of another language ("Nguyen Van An"), but not these.
_NOT_NAMES_AFTER = _words(lambda n: n.not_names_after)
_COMMON_CAPITALISED = _words(lambda n: n.sentence_starts)
# Capitalised words that are no one's name where a name is expected without a cue: replies and
# fillers, words of time, and the words that make a run of capitals a place, a firm or a product.
_NOT_BARE = frozenset(fold(w) for w in _words(lambda n: n.not_bare))

# Where case cannot tell a name, the lexicons' common words end it or rule it out.
_COMMON = frozenset(fold(w) for w in _words(lambda n: n.common_words))
_NOT_SIGNED = _NOT_BARE | frozenset(fold(w) for w in _NOT_NAMES | _NOT_NAMES_AFTER | _COMMON_CAPITALISED)
_NEVER_LOWER = _COMMON | _NOT_SIGNED

_WORD_AT = re.compile(r"[^\S\n]*(" + NAME_WORD + ")")
# What may follow a name given without a cue: the end of a clause, or a few words that continue it.
_AFTER_NAME = re.compile(r"[^\S\n]*(?:$|[,.!?;:…)/–—-]|(?i:(?:" + _either(lambda n: n.after) + r")(?!\w)))")
_LEAD = re.compile(r"(?i)^[\W_]*(?:(?:" + _either(lambda n: n.leads) + r")(?!\w)[\s,.:;!…-]*)*")
_IT_IS = re.compile(r"(?i)(?:" + _either(lambda n: n.it_is) + r")\s+")


def find_cued(text: str, add: Add) -> None:
    """Names after a cue, an honorific or a greeting (the extractor's names, in every turn)."""
    for pattern in _patterns(text):
        any_case = pattern in (_FIRM_CUES, _YOUR_NAME)
        for m in pattern.finditer(text):
            start, end = m.start("name"), None
            for w in re.finditer(r"\S+", m["name"]):
                word = w.group()
                if word.casefold() in PARTICLES and end is not None:
                    continue
                if not capitalised(word) and not (any_case and fold(word) not in _NEVER_LOWER):
                    break
                if word.casefold() in (_NOT_NAMES if end is None else _NOT_NAMES_AFTER):
                    break
                end = start + w.end()
            if end is None:
                continue
            end = start + _han_cut(text[start:end])
            first = text[start:end].split()[0]
            if pattern is not _HONORIFIC and first == text[start:end] and _is_sentence_start_word(first):
                continue
            if pattern is _HERE and fold(first) in _NOT_BARE:
                continue  # "Click here", "Wait here"
            add("name", start, end, norm(text[start:end]))


def introduces_self(text: str, start: int) -> bool:
    """Whether the name at ``start`` of ``text`` is the speaker's own ("my name is Dana", "this is
    Tom", "Tom here") rather than the name of the person spoken to ("Thanks, Dana", "Mr. Whitfield")."""
    own = (_FIRM_CUES, _NAME_CUES, _NAME_LABEL, _THIS_IS, _HERE)
    return any(m.start("name") == start for p in _patterns(text) if p in own for m in p.finditer(text))


# Words without which a pattern cannot match: a cheap search first spares most messages the
# patterns, each of which tries its alternatives at every position of the text.
def _hint(pick: Callable[[Names], tuple[str, ...]]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(h) for h in each(lambda lexicon: pick(lexicon.names))))


_HINTS: tuple[tuple[re.Pattern[str], re.Pattern[str] | None], ...] = (
    (_FIRM_CUES, _hint(lambda n: n.self_hints)),
    (_NAME_CUES, _hint(lambda n: n.self_hints)),
    (_NAME_LABEL, re.compile("name")),
    (_YOUR_NAME, _hint(lambda n: n.your_hints)),
    (_THIS_IS, re.compile("this is")),
    (_HERE, _hint(lambda n: n.here_hints)),
    (_HONORIFIC, None),
    (_GREETING_NAME, re.compile(_ADDRESSING)),  # the greetings and thanks themselves
)


def _patterns(text: str) -> list[re.Pattern[str]]:
    folded = text.casefold()
    return [p for p, hint in _HINTS if hint is None or hint.search(folded)]


def role(text: str, start: int, end: int) -> str:
    """Whom the name at ``text[start:end]`` names, seen from the speaker: ``self`` ("my name is
    Dana"), ``addressee`` ("Thanks, Dana", "your name is Dana") or ``other`` ("Dr. Johnson is
    available"): only the first two are a party's own name."""
    if introduces_self(text, start):
        return "self"
    if any(m.start("name") == start for m in _YOUR_NAME.finditer(text)):
        return "addressee"
    before = _TITLE_BEFORE.sub("", text[:start])
    if _BEFORE_ADDRESSEE.search(before) and _AFTER_ADDRESSEE.match(text, end):
        return "addressee"
    return "other"


def norm(name: str) -> str:
    """The matching form of a name: its words in lower case without accents ("o connor": the
    checker looks names up word by word, and "O'Connor" is two words there)."""
    return " ".join(re.findall(r"[^\W_]+", fold(name)))


def reply_name(text: str) -> tuple[int, int] | None:
    """The span of the name a reply to "could I get your name?" gives without a cue: "Yes, Sarah
    Brown.", "It's Angela", "Ben...wait", "Katarina Miller, account number is 95381901.", and in
    any case: "mei lin chen", "DARIUS OKONKWO"."""
    lead = _LEAD.match(text)
    pos = lead.end() if lead else 0
    it_is = _IT_IS.match(text, pos)
    if it_is:
        pos = it_is.end()
    return _run(text, pos, min_words=1, any_case=True)


def opening_name(text: str) -> tuple[int, int] | None:
    """The span of a full name a customer opens a message with, unasked ("Katarina Miller, there has
    been a transfer I did not make"): two words or more, then the end of the clause."""
    lead = _LEAD.match(text)
    return _run(text, lead.end() if lead else 0, min_words=2, clause=True)


def _run(
    text: str, pos: int, *, min_words: int, clause: bool = False, any_case: bool = False
) -> tuple[int, int] | None:
    """A run of name words starting at ``pos`` (capitalised unless ``any_case``), followed by what
    may follow a name."""
    start = end = None
    words = 0
    i = pos
    while words < 4:
        m = _WORD_AT.match(text, i)
        if m is None:
            break
        word = m.group(1)
        if word.casefold() in PARTICLES and end is not None:
            i = m.end()
            continue
        if len(word) > 30:
            break
        # where case does not decide, a word in capitals is as good as one in lower case ("c'est NGUYEN THI LAN")
        if _caseless(word, text) or (any_case and word.isupper() and len(word) > 1):
            if not any_case or fold(word) in _NEVER_LOWER:
                break
        elif not capitalised(word) or not _bare_word_ok(word, words == 0):
            break
        if start is None:
            start = m.start(1)
        end, words, i = m.end(1), words + 1, m.end()
        if _han(word):
            end = m.start(1) + _han_cut(word)
            break
    if start is None or end is None or words < min_words:
        return None
    after = _AFTER_NAME.match(text, end)
    if after is None or (clause and after.group().strip().isalpha()):
        return None
    if words == 1 and not _han(text[start:end]) and len(text[start:end]) < 2:
        return None
    return start, end


# A sign-off just before a signature ("Regards,", "thanks, ", "Viele Grüße\n").
_SIGN_OFF = re.compile(
    r"(?i)(?:^|(?<=[\s.!?,;:]))(?:" + _either(lambda n: n.sign_offs) + r")[^\S\n]*(?P<mark>[,:!.–—-]|\n)?\s*$"
)
_A_SIGN_OFF = re.compile(r"(?i)(?:" + _either(lambda n: n.sign_offs) + r")(?!\w)")
_SENTENCE_END = re.compile(r"(?:[.?!…)]|\n)\s*$")
_TOKEN = re.compile(r"\S+")


def signature(text: str) -> tuple[int, int] | None:
    """The span of a signature: two or three name words closing a message after a sentence of its
    own ("Can I cancel this order? Tomasz Wierzbicki") or a sign-off ("Regards,\nPriya
    Raghunathan", "thanks, olumide bakare"). Without a sign-off the words must be capitalised in a
    message that has case; after one, any case counts. Words of time, places, products and
    greetings, and the lexicons' common words, are no part of a signature."""
    end = len(text.rstrip(" \t\r\n.!…"))
    tokens = [m for m in _TOKEN.finditer(text, max(0, end - 120), end)][-5:]
    for size in (5, 4, 3, 2):
        run = tokens[-size:]
        if len(run) < size or any(text[a.end() : b.start()].count("\n") for a, b in zip(run, run[1:], strict=False)):
            continue
        named = [m.group() for m in run if m.group().casefold() not in PARTICLES]
        if not 2 <= len(named) <= 3 or run[0].group().casefold() in PARTICLES:
            continue
        if not all(re.fullmatch(NAME_WORD, m.group()) for m in run):
            continue
        before = text[: run[0].start()]
        if _A_SIGN_OFF.match(text, run[0].start()):
            continue  # "Best Wishes", "Kind Regards" close a message without naming anyone
        sign_off = _SIGN_OFF.search(before)
        if sign_off is None and not (_SENTENCE_END.search(before) and before.strip()):
            continue
        if _signed(named, text, first=run[0].group(), after_sign_off=sign_off is not None):
            return run[0].start(), run[-1].end()
    return None


def _signed(words: list[str], text: str, *, first: str, after_sign_off: bool) -> bool:
    """Whether ``words`` are a name by themselves, as a signature must be. A capitalised word that is
    a common word of some language may still be a name ("Ben"), but not when all of them are
    ("Still Waiting", "Bonne Journée")."""
    folded = [fold(w) for w in words]
    if any(w in _NOT_SIGNED or w in WEEKDAYS for w in folded) or fold(first) in MONTHS:
        return False
    if all(w in _COMMON for w in folded) or any(fold(w) in _COMMON for w in words if _caseless(w, text)):
        return False
    if after_sign_off:
        return True
    return all(capitalised(w) and not _caseless(w, text) and not (w.isupper() and len(w) > 3) for w in words)


def _caseless(word: str, text: str) -> bool:
    """Whether case says nothing of ``word``: written in lower case, or in a text all in capitals."""
    return not capitalised(word) or (word.isupper() and text == text.upper())


def _bare_word_ok(word: str, first: bool) -> bool:
    folded = fold(word)
    if folded in _NOT_BARE or folded in WEEKDAYS or word.casefold() in _NOT_NAMES_AFTER:
        return False
    if first and (word.casefold() in _NOT_NAMES or word in _COMMON_CAPITALISED or folded in MONTHS):
        return False
    # all capitals of more than 3 letters is shouting or an acronym ("HELP", "ASAP"), not a name
    return not (word.isupper() and len(word) > 3)


def _han(word: str) -> bool:
    return bool(word) and all(unicodedata.name(c, "").startswith("CJK") for c in word if c.isalpha())


def _han_cut(name: str) -> int:
    """Chinese and Japanese write no space after a name: keep at most four characters of one."""
    return min(len(name), 4) if _han(name) else len(name)


def _is_sentence_start_word(word: str) -> bool:
    return word in _COMMON_CAPITALISED or word.casefold() in WEEKDAYS or word.casefold() in MONTHS
