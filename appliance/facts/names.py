"""Names of people after a cue ("my name is", "this is", "Mr.", "ici", "u spreekt met", "Weber
mein Name", "Oluwaseun Adeyemi here", "in the name of", "first name Ayşe"), and whom each names
(:func:`role`). Names given without a cue, where a customer answers a request for their name, opens
a message with it or signs it, are found by their place in :mod:`appliance.facts.uncued`.

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
    IDENTIFIER_WORD,
    NAME_WORD,
    NOT_BARE,
    NOT_NAMES,
    NOT_NAMES_AFTER,
    PARTICLES,
    SENTENCE_STARTS,
    SIGN_OFF_WORD,
    TITLES,
    WORD_FORM,
    caseless,
    common,
    dated,
    han_cut,
    month,
    sentence_start_word,
    upper,
)
from appliance.facts.text import WEEKDAYS
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
_OPENER = re.compile(r"(?i)(?:" + (_either(lambda n: n.openers) or "(?!)") + r")\s")
_GREETING_END = re.compile(r"(?i)(?<!\w)(?:" + _either(lambda n: n.greetings) + r")\W+$")
# "in the name of", "au nom de": the name something is held under, the customer's whoever says it, in any case.
_HOLDER = re.compile(r"(?<!\w)(?i:" + (_either(lambda n: n.holder_cues) or "(?!)") + r")\s+" + _NAME_BODY)
# "I have the rental under Daniel Okafor, is that right?": the same after a short word, capitalised.
_HELD = re.compile(r"(?<!\w)(?i:" + (_either(lambda n: n.holder_words) or "(?!)") + r")\s+" + _NAME_BODY)
# "first name Ayşe last name Yılmaz", "surname's Wiśniewska", "Nachname: Müller": a part of the name,
# the customer's whoever says it (not another's: "my mother's first name"); in any case after a verb or a colon.
_PART_VERB = r"\s*[:=]|\s*['’]\s*s|\s+(?:" + either(lambda lexicon: lexicon.entities.label_verbs) + r")(?!\w)"
_PART_LABEL = r"(?i:" + (_either(lambda n: n.part_labels) or "(?!)") + r")"
# A surname may open with its particles ("nom de famille : de la fontaine", "achternaam: van 't Wout").
_NAME_PART = re.compile(
    r"(?<![\w'’])(?<!['’]s )"
    + _PART_LABEL
    + r"(?:(?P<verb>"
    + _PART_VERB
    + r")\s*|\s+)"
    + rf"(?P<name>(?:{_PARTICLE}\s+){{0,2}}{NAME_WORD}(?:\s+(?:{_PARTICLE}\s+){{0,2}}{NAME_WORD}){{0,3}})"
)
# After a part given without a verb, the next part's label may follow ("first name Ayşe last name Yılmaz").
_NEXT_PART = re.compile(r"\s+" + _PART_LABEL)
# "my son, oliver grant", "meinen Mann, Klaus-Peter Zimmermann": the name of the one a word of kin names.
_KIN = re.compile(r"(?<!\w)(?i:" + (_either(lambda n: n.kin) or "(?!)") + r")\s*,?\s+" + _NAME_BODY)
# "auf den Namen Weiß, Gerda": a surname, then the given name closing the sentence.
_GIVEN_AFTER = re.compile(r",[^\S\n]*(?P<given>" + NAME_WORD + r")(?=[^\S\n]*(?:$|[.!?\n]))")


def _opens(text: str, m: re.Match[str], pattern: re.Pattern[str]) -> bool:
    """Whether the introduction ``m`` stands where one introduces its speaker: after a greeting or at
    the start of the message ("met Kwame Mensah, ..."), or, for :data:`_INTRO`, at the start of a
    sentence or clause too."""
    if _GREETING_END.search(text, max(0, m.start() - 40), m.start()):
        return True
    before = text[: m.start()].rstrip()
    if not before:
        return pattern is _INTRO or _OPENER.match(text, m.start()) is not None
    return pattern is _INTRO and before[-1] in ".!?,;"


# "Oluwaseun Adeyemi here", "Tom speaking - ...": a clause of its own, at the start of the message or a sentence.
_HERE = re.compile(
    r"(?:^|[.!?;]\s+|(?i:" + _either(lambda n: n.greetings) + r")\W+)"
    r"(?P<name>" + NAME_WORD + r"(?:\s+" + NAME_WORD + r"){0,2})\s+(?i:" + _either(lambda n: n.here) + r")"
    r"(?=\s*(?:[,.!?;:–—-]|$))"
)
_HONORIFIC = re.compile(r"(?<!\w)" + TITLES + r"\.?\s+" + _NAME_BODY)
# A name spoken to: after a greeting or thanks, or alone between commas, then the end of the clause
# ("Thanks, Dana.", "Mr. Smith, your order..."), unlike one spoken of ("your appointment with Dr. Johnson").
_ADDRESSING = _either(lambda n: n.addressing)
_BEFORE_ADDRESSEE = re.compile(
    r"(?:^|[,;:.!?]|(?i:(?<!\w)(?:" + _ADDRESSING + "|" + _either(lambda n: n.assent) + r")))\s*$"
)
_TITLE_BEFORE = re.compile(r"(?<!\w)" + TITLES + r"\.?\s+$")
_AFTER_ADDRESSEE = re.compile(r"\s*(?:$|[,.!?;:])")
_GREETING_NAME = re.compile(
    r"(?i:(?<!\w)(?:" + _ADDRESSING + r"))"
    r",?\s+(?P<name>" + NAME_WORD + r"(?:\s+" + NAME_WORD + r"){0,2})(?=\s*[,.!?;]|\s*$)"
)

# What ends a name that a cue introduces where case cannot tell where it ends, or that an
# introduction gives: the end of the clause, or a word that never continues a name.
_FOLLOW = re.compile(
    r"[^\S\n]*(?:$|\n|[,.!?;:…)/–—-]|(?i:(?:"
    + _either(lambda n: n.after)
    + "|"
    + "|".join(re.escape(w) for w in sorted(NOT_NAMES_AFTER))
    + r")(?!\w)))"
)


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


# Cues after which a name counts in any case; patterns whose name must be a clause of its own; the
# patterns of a name that is the customer's whoever says it.
_FIRM = (_FIRM_CUES, _YOUR_NAME, _NAME_LABEL, _HOLDER)
_CLAUSE = (_INTRO, _GREETED, _HERE, _HELD)
_HOLDERS = (_HOLDER, _HELD, _NAME_PART)
# Patterns whose name is no word of a place or a product ("this is Holy Trinity Church", "my wife Visa card").
_BARE_NAMED = (*_CLAUSE, _KIN)


def _cued(text: str, m: re.Match[str], pattern: re.Pattern[str], blind: bool) -> tuple[int, int] | None:
    """The span of the name that ``m`` of ``pattern`` found. In a text where case says nothing
    (``blind``), a cue that does not always name ("I'm", "this is") needs two name words, not
    a form of a verb first, and then the end of the clause or a word that ends a name."""
    if pattern in (_INTRO, _GREETED) and not _opens(text, m, pattern):
        return None
    firm = pattern in _FIRM or (pattern is _NAME_PART and m["verb"] is not None)
    blind = blind and pattern not in (_HONORIFIC, _HELD)  # a title is written with its case ("Dr. Morgan")
    start = m.start("name")
    end, words = _name_words(text, m, pattern, firm=firm, blind=blind)
    if end is None:
        return None
    end = start + han_cut(text[start:end])
    if not _kept(text, m, pattern, (start, end, words), firm=firm, blind=blind):
        return None
    given = _GIVEN_AFTER.match(text, end) if words == 1 and pattern in _FIRM else None
    if given is not None and (firm or upper(given["given"])) and not common(given["given"]):
        end = given.end("given")  # "auf den Namen Weiß, Gerda"
    return start, end


def _name_words(
    text: str, m: re.Match[str], pattern: re.Pattern[str], *, firm: bool, blind: bool
) -> tuple[int | None, int]:
    """Where the name ``m`` found ends, and its number of words (particles aside)."""
    start, end, words = m.start("name"), None, 0
    for w in _TOKEN.finditer(m["name"]):
        word = w.group()
        if word.casefold() in PARTICLES and (end is not None or pattern is _NAME_PART):
            continue  # "de la fontaine" after a surname's label
        if blind or caseless(word, text):
            ok = (firm or blind) and not common(word)
            ok = ok and (firm or words > 0 or not WORD_FORM.fullmatch(word))
        else:
            ok = upper(word)
        if not ok or word.casefold() in (NOT_NAMES if end is None else NOT_NAMES_AFTER):
            break
        if (fold(word) in WEEKDAYS or (end is not None and month(word))) and not (
            pattern in _OWN and upper(word) and not _TIME_AFTER.match(text, m.start("name") + w.end())
        ):
            break  # "Dr Johnson Saturday 10am"; not "my name is Marta Lunes", "soy Domingo Pérez"
        if pattern in _BARE_NAMED and (fold(word) in NOT_BARE or (end is None and word in SENTENCE_STARTS)):
            break  # "Click here", "this is Holy Trinity Church", "Hier ist Ihre Bestellnummer"
        if IDENTIFIER_WORD.fullmatch(word):
            break
        end, words = start + w.end(), words + 1
    return end, words


def _kept(
    text: str, m: re.Match[str], pattern: re.Pattern[str], span: tuple[int, int, int], *, firm: bool, blind: bool
) -> bool:
    """Whether the name at ``span`` (start, end, words) stands where ``pattern`` gives one."""
    start, end, words = span
    word = text[start:end]
    if pattern is not _HONORIFIC and words == 1 and sentence_start_word(word) and not (firm and dated(word)):
        return False  # "I'm Sorry", "this is Friday"; not "my name is April"
    if pattern is _HERE and end != m.end("name"):
        return False
    if pattern in _CLAUSE and SIGN_OFF_WORD.match(text, start):
        return False  # "Bedankt. Met vriendelijke groet"
    if not firm and (blind or pattern is _HELD) and words < 2:
        return False  # "im fine", "this is ridiculous", "under Settings"
    if pattern is _NAME_PART and not firm:  # "first name Ayşe last name ...", not "Der Vorname Feld ist leer"
        return bool(_FOLLOW.match(text, end) or _NEXT_PART.match(text, end))
    return firm or pattern is _HERE or not (blind or pattern in _CLAUSE) or bool(_FOLLOW.match(text, end))


_TOKEN = re.compile(r"\S+")
# A name's own cue: the speaker's, or the one something is held under. After one, a word that is a
# weekday or a month too is a name's ("my name is Marta Lunes", "au nom de Jean Mardi"), unless a
# time or a date follows it ("this is Tom Friday 10am").
_OWN = (_FIRM_CUES, _NAME_CUES, _UNMARKED, _NAME_LABEL, _INTRO, _GREETED, _HERE, _HOLDER, _HELD)
_TIME_AFTER = re.compile(r"\W{0,3}\d")
_A_NAME_WORD = re.compile(NAME_WORD)
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
    (_HOLDER, re.compile(_either(lambda n: n.holder_cues) or "(?!)")),
    (_HELD, re.compile(_either(lambda n: n.holder_words) or "(?!)")),
    (_NAME_PART, re.compile(_either(lambda n: n.part_labels) or "(?!)")),
    (_KIN, re.compile(_either(lambda n: n.kin) or "(?!)")),
)


def _patterns(text: str) -> list[re.Pattern[str]]:
    folded = text.casefold()
    return [p for p, hint in _HINTS if hint is None or hint.search(folded)]


def role(text: str, start: int, end: int) -> str:
    """Whom the name at ``text[start:end]`` names, seen from the speaker: ``self`` ("my name is
    Dana"), ``addressee`` ("Thanks, Dana", "your name is Dana"), ``holder`` (the customer, whoever
    says it: "booked in the name of Dana Whitfield", "first name Dana") or ``other`` ("Dr. Johnson
    is available"): only the first three are a party's own name."""
    if introduces_self(text, start):
        return "self"
    if any(m.start("name") == start for m in _YOUR_NAME.finditer(text)):
        return "addressee"
    if any(m.start("name") == start for p in _HOLDERS for m in _every(p, text)):
        return "holder"
    if any(m.start("name") == start for m in _every(_KIN, text)):
        return "other"  # "it's for my son, Tom."
    before = _TITLE_BEFORE.sub("", text[:start])
    if _BEFORE_ADDRESSEE.search(before) and _AFTER_ADDRESSEE.match(text, end):
        return "addressee"
    return "other"


def one_word(name: str) -> bool:
    """Whether ``name`` is one word but for its particles ("Okonkwo", "Ó Súilleabháin"): a part of a name."""
    return sum(w.casefold() not in PARTICLES for w in name.split()) == 1


def norm(name: str) -> str:
    """The matching form of a name: its words in lower case without accents ("o connor": the
    checker looks names up word by word, and "O'Connor" is two words there)."""
    return " ".join(re.findall(r"[^\W_]+", fold(name)))
