"""Names of people: after a cue ("my name is", "this is", "Mr.", "ici", "u spreekt met", "Weber
mein Name"), and without one, where a customer answers a request for their name, opens a message
with it or signs it ("Yes, Sarah Brown.", "Katarina Miller, there has been ...", "Oluwaseun Adeyemi
here", "... get a refund? Tomasz Wierzbicki", "... asap\n- dev patel").

Case does not decide a name where its place does: after a cue that always introduces one ("my name
is mei lin chen") or a label ("name is bjorn lindqvist"), in a reply to a request for it ("mei lin
chen", "DARIUS OKONKWO", surname first: "de la cruz, maria", "Müller, Sabine") and in a signature
after a sign-off ("thanks, olumide bakare"), a name counts in lower case or capitals, and the
lexicons' common words ("and", "need", "pas") end it or rule it out. In a message where case says
nothing at all (all in capitals, or capitals only where sentences start: :func:`case_blind`), the
other cues ("I'm", "im", "this is", "X here") take a name in any case too, but only of two words or
more, not starting with a form of a verb ("I AM MOVING HOUSE"), and ending its clause or followed
by a word that ends a name ("HI THIS IS GRACE MWANGI I AM ..."). Elsewhere a name starts with a
capital, as before. The ledger keeps a name as it was written; its norm is lower case.

No model: the registry has no named-entity model that ships its weights and runs offline with
onnxruntime (docs/facts.md says which were tried), so names are found by their shape: runs of
capitalised words, or of words of a script without case (Arabic, Chinese, Hindi), with the
particles of many naming traditions ("van der", "de la", "bin", "El") and the apostrophes and
hyphens inside names ("O'Connor", "Jean-Luc"). What keeps ordinary words out is
:mod:`appliance.facts.namewords`, never a list of given names or surnames: "Nguyen Van An" is found
the same way as "Sarah Brown". The cues and words of each language are in its lexicon
(:mod:`appliance.lexicon`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator

from appliance.facts.namewords import (
    COMMON,
    IDENTIFIER_WORD,
    NAME_WORD,
    NEVER_LOWER,
    NOT_BARE,
    NOT_NAMES,
    NOT_NAMES_AFTER,
    NOT_SIGNED,
    PARTICLES,
    SENTENCE_STARTS,
    WORD_FORM,
    bare_word_ok,
    caseless,
    month,
    sentence_start_word,
)
from appliance.facts.text import WEEKDAYS, capitalised
from appliance.lexicon import LEXICONS, Names, each, either
from appliance.lexicon.text import fold

Add = Callable[[str, int, int, str], None]  # kind, start, end, norm

_PARTICLE = "(?i:" + "|".join(sorted(PARTICLES)) + ")"
# Up to four words, with particles between them ("Jan van der Berg", "Fatima Zahra El Idrissi").
_NAME_BODY = rf"(?P<name>{NAME_WORD}(?:\s+(?:{_PARTICLE}\s+){{0,2}}{NAME_WORD}){{0,3}})"


def _either(pick: Callable[[Names], tuple[str, ...]]) -> str:
    return either(lambda lexicon: pick(lexicon.names))


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
# Self cues typed without their apostrophe ("im wendell okafor"), read where case says nothing.
_UNMARKED = re.compile(r"(?<!\w)(?i:" + (_either(lambda n: n.unmarked_cues) or "(?!)") + r")\s+" + _NAME_BODY)
# The cues that always introduce a name: after them case does not decide ("my name is mei lin chen").
_FIRM_CUES = re.compile(r"(?<!\w)(?i:" + _either(lambda n: n.firm_cues) + r")\s+" + _NAME_BODY)
# "Name: Sarah Brown", "name is bjorn lindqvist": a label at the start of a clause, then any case.
_NAME_LABEL = re.compile(r"(?:^|(?<=[.!?,;:\n]))\s*(?i:" + _either(lambda n: n.labels) + r")\s*" + _NAME_BODY)
# Second-person cues: the name that follows is the listener's ("your name is Dana", from an agent).
_YOUR_NAME = re.compile(r"(?<!\w)(?i:" + _either(lambda n: n.your_cues) + r")\s*:?\s+" + _NAME_BODY)
# "This is Tom", "ici Jean-Baptiste de La Fontaine" introduce someone only at the start of a sentence
# or after a greeting, and only when the name ends the clause (:data:`_FOLLOW`; "this is Tom from
# billing", not "this is Holy Trinity Church").
_INTRO = re.compile(r"(?<![\w'’])(?i:" + _either(lambda n: n.introductions) + r")\s+" + _NAME_BODY)
# "Hi, it's Priya Nair", "Goedemorgen, met Kees Mulder": ordinary words that introduce only after a greeting.
_GREETED = re.compile(r"(?<![\w'’])(?i:" + (_either(lambda n: n.greeted) or "(?!)") + r")\s+" + _NAME_BODY)
_GREETING_END = re.compile(r"(?i)(?<!\w)(?:" + _either(lambda n: n.greetings) + r")\W+$")


def _opens(text: str, m: re.Match[str], pattern: re.Pattern[str]) -> bool:
    """Whether the introduction ``m`` stands where one introduces its speaker: after a greeting,
    or, for :data:`_INTRO`, at the start of the message or of a sentence or clause."""
    if _GREETING_END.search(text, max(0, m.start() - 40), m.start()):
        return True
    before = text[: m.start()].rstrip()
    return pattern is _INTRO and (not before or before[-1] in ".!?,;")


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

# A whole word: "TK" of "TK-88731" is none.
_WORD_AT = re.compile(r"[^\S\n]*(" + NAME_WORD + r")(?![\w'’-])")
# What may follow a name given without a cue: the end of a clause, or a few words that continue it.
_AFTER_NAME = re.compile(r"[^\S\n]*(?:$|[,.!?;:…)/–—-]|(?i:(?:" + _either(lambda n: n.after) + r")(?!\w)))")
# What ends a name that a cue introduces where case cannot tell where it ends, or that an
# introduction gives: the end of the clause, or a word that never continues a name.
_FOLLOW = re.compile(
    r"[^\S\n]*(?:$|\n|[,.!?;:…)/–—-]|(?i:(?:"
    + _either(lambda n: n.after)
    + "|"
    + "|".join(re.escape(w) for w in sorted(NOT_NAMES_AFTER))
    + r")(?!\w)))"
)
_LEAD = re.compile(r"(?i)^[\W_]*(?:(?:" + _either(lambda n: n.leads) + r")(?!\w)[\s,.:;!…-]*)*")
# "it's", "under the name", "au nom de", "its under": what a reply may say before a name, once or twice.
_IT_IS = re.compile(r"(?i)(?:(?:" + _either(lambda n: n.it_is) + r")(?!\w)[\s,:]+){1,3}")


def find_cued(text: str, add: Add) -> None:
    """Names after a cue, an honorific or a greeting (the extractor's names, in every turn)."""
    blind: bool | None = None  # whether case says nothing, found out at the first match
    for pattern in _patterns(text):
        pos = 0
        # each search starts after the name found, not after the words the pattern ran over: "My first
        # name is Grace and my surname is Okonkwo"
        while (m := pattern.search(text, pos)) is not None:
            if blind is None:
                blind = case_blind(text)
            if pattern is _UNMARKED and not blind:
                break
            span = _cued(text, m, pattern, blind)
            if span is not None:
                add("name", span[0], span[1], norm(text[span[0] : span[1]]))
            pos = max(m.start() + 1, span[1] if span else m.start("name"))


# Cues after which a name counts in any case; patterns whose name must be a clause of its own.
_FIRM = (_FIRM_CUES, _YOUR_NAME, _NAME_LABEL)
_CLAUSE = (_INTRO, _GREETED, _HERE)


def _cued(text: str, m: re.Match[str], pattern: re.Pattern[str], blind: bool) -> tuple[int, int] | None:
    """The span of the name that ``m`` of ``pattern`` found. In a text where case says nothing
    (``blind``), a cue that does not always name ("I'm", "this is") needs two name words, not
    a form of a verb first, and then the end of the clause or a word that ends a name."""
    if pattern in (_INTRO, _GREETED) and not _opens(text, m, pattern):
        return None
    firm = pattern in _FIRM
    blind = blind and pattern is not _HONORIFIC  # a title is written with its case ("Dr. Morgan")
    start, end, words = m.start("name"), None, 0
    for w in _TOKEN.finditer(m["name"]):
        word = w.group()
        if word.casefold() in PARTICLES and end is not None:
            continue
        if blind or caseless(word, text):
            ok = (firm or blind) and fold(word) not in NEVER_LOWER
            ok = ok and (firm or words > 0 or not WORD_FORM.fullmatch(word))
        else:
            ok = capitalised(word)
        if not ok or word.casefold() in (NOT_NAMES if end is None else NOT_NAMES_AFTER):
            break
        if fold(word) in WEEKDAYS or (end is not None and month(word)):
            break  # "Dr Johnson Saturday 10am"
        if pattern in _CLAUSE and (fold(word) in NOT_BARE or (end is None and word in SENTENCE_STARTS)):
            break  # "Click here", "this is Holy Trinity Church", "Hier ist Ihre Bestellnummer"
        if IDENTIFIER_WORD.fullmatch(word):
            break
        end, words = start + w.end(), words + 1
    if end is None:
        return None
    end = start + _han_cut(text[start:end])
    if pattern is not _HONORIFIC and words == 1 and sentence_start_word(text[start:end]):
        return None
    if pattern is _HERE and end != m.end("name"):
        return None
    if pattern in _CLAUSE and _A_SIGN_OFF.match(text, start):
        return None  # "Bedankt. Met vriendelijke groet"
    if not firm and blind and words < 2:
        return None  # "im fine", "this is ridiculous"
    if not firm and pattern is not _HERE and (blind or pattern in _CLAUSE) and not _FOLLOW.match(text, end):
        return None
    return start, end


_FIRST_PERSON = frozenset({"i", "i'm", "i’m", "i'd", "i’d", "i've", "i’ve", "i'll", "i’ll"})


def case_blind(text: str) -> bool:
    """Whether case says nothing of names in ``text``: written all in capitals, or with no capital
    but at the start of a sentence and in "I" ("hi this is grace mwangi", "Hi, im wendell okafor")."""
    if not any(c.islower() for c in text):
        return any(c.isupper() for c in text)
    for m in _A_NAME_WORD.finditer(text):
        word = m.group()
        if any(c.isupper() for c in word) and word.casefold() not in _FIRST_PERSON:
            before = text[: m.start()].rstrip(" \t\"'“‘(¿¡*-")
            if before and (before[-1] not in ".!?…:;\n" or _TITLE_BEFORE.search(text, 0, m.start())):
                return False
    return True


def introduces_self(text: str, start: int) -> bool:
    """Whether the name at ``start`` of ``text`` is the speaker's own ("my name is Dana", "this is
    Tom", "Tom here") rather than the name of the person spoken to ("Thanks, Dana", "Mr. Whitfield")."""
    own = (_FIRM_CUES, _NAME_CUES, _UNMARKED, _NAME_LABEL, _INTRO, _GREETED, _HERE)
    return any(
        m.start("name") == start and (p not in (_INTRO, _GREETED) or _opens(text, m, p))
        for p in _patterns(text)
        if p in own
        for m in _every(p, text)
    )


def _every(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """Every match of ``pattern`` in ``text``, overlapping ones too."""
    pos = 0
    while (m := pattern.search(text, pos)) is not None:
        yield m
        pos = m.start() + 1


# Words without which a pattern cannot match: a cheap search first spares most messages the
# patterns, each of which tries its alternatives at every position of the text.
def _hint(pick: Callable[[Names], tuple[str, ...]]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(h) for h in each(lambda lexicon: pick(lexicon.names))))


_HINTS: tuple[tuple[re.Pattern[str], re.Pattern[str] | None], ...] = (
    (_FIRM_CUES, _hint(lambda n: n.self_hints)),
    (_NAME_CUES, _hint(lambda n: n.self_hints)),
    (_UNMARKED, re.compile(r"(?<!\w)(?:" + (_either(lambda n: n.unmarked_cues) or "(?!)") + r")\s")),
    (_NAME_LABEL, _hint(lambda n: n.label_hints)),
    (_YOUR_NAME, _hint(lambda n: n.your_hints)),
    (_INTRO, re.compile(_either(lambda n: n.introductions))),
    (_GREETED, re.compile(_either(lambda n: n.greeted) or "(?!)")),
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
    Brown.", "It's Angela", "Ben...wait", "Katarina Miller, account number is 95381901.", in any
    case ("mei lin chen", "DARIUS OKONKWO"), and surname first, then the given name closing the
    reply ("de la cruz, maria", "Ja klar, Müller, Sabine"). A single word in lower case is a name
    only as the whole reply ("tom", not "perdón, ¿para qué?")."""
    lead = _LEAD.match(text)
    pos = lead.end() if lead else 0
    pos = lead_end(text, pos)
    span = name_at(text, pos)
    if span is None:
        return None
    start, end = span
    comma = _COMMA.match(text, end)
    given = _run(text, comma.end(), min_words=1, any_case=True) if comma else None
    if given is not None and given[1] - given[0] <= 40 and _CLOSES.fullmatch(text, given[1]):
        return start, given[1]
    named = [w for w in text[start:end].split() if w.casefold() not in PARTICLES]
    if len(named) == 1 and caseless(named[0], text) and not _CLOSES.fullmatch(text, end):
        return None
    return span


_COMMA = re.compile(r",[^\S\n]*")
_CLOSES = re.compile(r"[\s.!…]*")


def lead_end(text: str, pos: int) -> int:
    """Where a name given in reply starts after ``pos``: past "it's", "under the name", "au nom de",
    and titles ("Mit Frau Dr. Ingrid Lange")."""
    it_is = _IT_IS.match(text, pos)
    pos = it_is.end() if it_is else pos
    title = _TITLES_AT.match(text, pos)
    return title.end() if title else pos


_TITLES_AT = re.compile(r"(?:" + _TITLES + r"\.?\s+)+")


def name_at(text: str, pos: int) -> tuple[int, int] | None:
    """The span of a name in any case at ``pos``, where the place says a name stands there (a reply
    to a request for it, the value after a correction: "oops typo, its anna schmitt")."""
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
    may follow a name. Particles may open it when a name word follows ("de la cruz", "Van den Broek")."""
    start = end = None
    words = 0
    i = pos
    while words < 4:
        m = _WORD_AT.match(text, i)
        if m is None:
            break
        word = m.group(1)
        if word.casefold() in PARTICLES:
            start = m.start(1) if start is None else start
            i = m.end()
            continue
        if len(word) > 30:
            break
        # where case does not decide, a word in capitals is as good as one in lower case ("c'est NGUYEN THI LAN")
        if caseless(word, text) or (any_case and word.isupper() and len(word) > 1):
            if not any_case or fold(word) in NEVER_LOWER or IDENTIFIER_WORD.fullmatch(word):
                break
        elif not capitalised(word) or not bare_word_ok(word, words == 0):
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
_SENTENCE_END = re.compile(r"(?:[.?!…)]|\n|\s[-–—])\s*$")
# A dash opening the last line signs a message too ("... please help asap\n- dev patel").
_DASH = re.compile(r"(?:^|\n)[^\S\n]*(?:--?|[–—~])[^\S\n]*$")
_TOKEN = re.compile(r"\S+")
_A_NAME_WORD = re.compile(NAME_WORD)


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
        if not all(_A_NAME_WORD.fullmatch(m.group()) for m in run):
            continue
        before = text[: run[0].start()]
        if _A_SIGN_OFF.match(text, run[0].start()):
            continue  # "Best Wishes", "Kind Regards" close a message without naming anyone
        sign_off = _SIGN_OFF.search(before) or _DASH.search(before)
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
    if any(w in NOT_SIGNED or w in WEEKDAYS for w in folded) or month(first):
        return False
    if any(IDENTIFIER_WORD.fullmatch(w) for w in words):
        return False
    if all(w in COMMON for w in folded) or any(fold(w) in COMMON for w in words if caseless(w, text)):
        return False
    if after_sign_off:
        return True
    return all(capitalised(w) and not caseless(w, text) and not (w.isupper() and len(w) > 3) for w in words)


def _han(word: str) -> bool:
    return bool(word) and all(unicodedata.name(c, "").startswith("CJK") for c in word if c.isalpha())


def _han_cut(name: str) -> int:
    """Chinese and Japanese write no space after a name: keep at most four characters of one."""
    return min(len(name), 4) if _han(name) else len(name)
