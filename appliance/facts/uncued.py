"""Names given without a cue, found by their place: in a reply to a request for the name ("Yes, Sarah
Brown.", "de la cruz, maria", "the booking is for nguyen thi lan"), opening a message ("Katarina
Miller, there has been ..."), or as a signature closing it ("... get a refund? Tomasz Wierzbicki",
"thanks, olumide bakare", "... asap\n- dev patel").

A reply and a signature after a sign-off take a name in any case; a signature without one is
capitalised in a message that has case, or of three words where case says nothing. What keeps
ordinary words out is :mod:`appliance.facts.namewords`, as for the names after a cue
(:mod:`appliance.facts.names`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from appliance.facts.names import case_blind
from appliance.facts.namewords import (
    COMMON,
    IDENTIFIER_WORD,
    NAME_TOKEN,
    NOT_NAMES_AFTER,
    NOT_SIGNED,
    PARTICLES,
    SIGN_OFF_WORD,
    TITLES,
    WORD_FORM,
    bare_word_ok,
    caseless,
    common,
    han,
    han_cut,
    month,
    upper,
)
from appliance.facts.text import WEEKDAYS
from appliance.lexicon import LEXICONS, Names, each, either
from appliance.lexicon.text import fold


def _either(pick: Callable[[Names], tuple[str, ...]]) -> str:
    return either(lambda lexicon: pick(lexicon.names))


# A whole word: "TK" of "TK-88731" is none.
_WORD_AT = re.compile(r"[^\S\n]*(" + NAME_TOKEN + r")(?![\w'’-])")
# What may follow a name given without a cue: the end of a clause, or a few words that continue it.
_AFTER_NAME = re.compile(r"[^\S\n]*(?:$|[,.!?;:…)/–—-]|(?i:(?:" + _either(lambda n: n.after) + r")(?!\w)))")
_LEAD = re.compile(r"(?i)^[\W_]*(?:(?:" + _either(lambda n: n.leads) + r")(?!\w)[\s,.:;!…-]*)*")
# "it's", "under the name", "au nom de", "its under": what a reply may say before a name, once or twice.
_IT_IS = re.compile(r"(?i)(?:(?:" + _either(lambda n: n.it_is) + r")(?!\w)[\s,:]+){1,3}")


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
        return _held_reply(text)
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
# What a reply says before the name it does not open with: "the booking is for ...", "c'est pour ...".
_REPLY_HOLDER = re.compile(
    r"(?i)(?<!\w)(?:"
    + "|".join(each(lambda lexicon: (*lexicon.names.holder_cues, *lexicon.names.reply_holders)))
    + r")\s+"
)
_CLAUSE_END = re.compile(r"[^\S\n]*(?:$|[,.!?;:…])")


def _held_reply(text: str) -> tuple[int, int] | None:
    """The name a reply gives after the words of what it is held under, ending the clause: "the
    booking is for nguyen thi lan", "es para Lucía": capitalised, or of two words where case says nothing."""
    for m in _REPLY_HOLDER.finditer(text):
        title = _TITLES_AT.match(text, m.end())
        span = name_at(text, title.end() if title else m.end())
        if span is None or not _CLAUSE_END.match(text, span[1]):
            continue
        named = [w for w in text[span[0] : span[1]].split() if w.casefold() not in PARTICLES]
        if len(named) >= 2 or not caseless(named[0], text):
            return span
    return None


def lead_end(text: str, pos: int) -> int:
    """Where a name given in reply starts after ``pos``: past "it's", "under the name", "au nom de",
    and titles ("Mit Frau Dr. Ingrid Lange")."""
    it_is = _IT_IS.match(text, pos)
    pos = it_is.end() if it_is else pos
    title = _TITLES_AT.match(text, pos)
    return title.end() if title else pos


# Titles before a name given in reply, in any case there ("c'est pour mme nguyen thi hoa").
_TITLES_AT = re.compile(r"(?i:" + TITLES + r")\.?\s+(?:(?i:" + TITLES + r")\.?\s+)*")


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
            if not any_case or common(word) or IDENTIFIER_WORD.fullmatch(word):
                break
        elif not upper(word) or not bare_word_ok(word, words == 0, asked=any_case):
            break
        if start is None:
            start = m.start(1)
        end, words, i = m.end(1), words + 1, m.end()
        if han(word):
            end = m.start(1) + han_cut(word)
            break
    if start is None or end is None or words < min_words:
        return None
    after = _AFTER_NAME.match(text, end)
    if after is None or (clause and after.group().strip().isalpha()):
        return None
    if words == 1 and not han(text[start:end]) and len(text[start:end]) < 2:
        return None
    return start, end


# A sign-off just before a signature ("Regards,", "thanks, ", "Viele Grüße\n").
_SIGN_OFF = re.compile(
    r"(?i)(?:^|(?<=[\s.!?,;:]))(?:" + _either(lambda n: n.sign_offs) + r")[^\S\n]*(?P<mark>[,:!.–—-]|\n)?\s*$"
)
_SENTENCE_END = re.compile(r"(?:[.?!…)]|\n|\s(?:--?|[–—]))\s*$")
# A dash opening the last line signs a message too ("... please help asap\n- dev patel").
_DASH = re.compile(r"(?:^|\n)[^\S\n]*(?:--?|[–—~])[^\S\n]*$")
_TOKEN = re.compile(r"\S+")
_A_NAME_TOKEN = re.compile(NAME_TOKEN)


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
        if not all(_A_NAME_TOKEN.fullmatch(m.group()) for m in run):
            continue
        before = text[: run[0].start()]
        if SIGN_OFF_WORD.match(text, run[0].start()):
            continue  # "Best Wishes", "Kind Regards" close a message without naming anyone
        sign_off = _SIGN_OFF.search(before) or _DASH.search(before)
        # a message typed in lower case whose last words alone are capitalised ("... can someone check
        # please Bogdan Wiśniewski") closes with them as with a sentence of its own
        lower = not any(c.isupper() for c in before) and all(upper(w) for w in named) and not _of_phrase(before)
        if sign_off is None and not ((_SENTENCE_END.search(before) or lower) and before.strip()):
            continue
        own_line = before.rstrip(" \t").endswith("\n")
        if _signed(named, text, first=run[0].group(), after_sign_off=sign_off is not None, own_line=own_line):
            return run[0].start(), run[-1].end()
    return None


def _of_phrase(before: str) -> bool:
    """Whether the words before a run end in a word that joins it to their phrase ("to the Mobile
    App", "op de Grote Markt", "am Alten Markt", "my Samsung Galaxy": a short common word), not one
    that closes a message ("please")."""
    words = before.split()
    last = fold(words[-1]) if words else ""
    return (last in _JOINING or (last in COMMON and len(last) <= 3)) and last not in _CLOSING


# Words that join a run of capitals to the phrase before it: "to", "the", "am" ("am Alten Markt"),
# "de", "your".
_JOINING = (
    NOT_NAMES_AFTER
    | PARTICLES
    | frozenset(
        fold(w)
        for lex in LEXICONS.values()
        for w in (*lex.entities.qualifiers, *lex.entities.articles, *lex.requests.listeners)
    )
)
# Words that close a message before its signature: "please", "bitte", "merci", "svp", "alstublieft".
_CLOSING = frozenset(
    fold(w)
    for lex in LEXICONS.values()
    for w in (*lex.names.after, *lex.names.addressing, *lex.names.sign_offs)
    if re.fullmatch(r"[^\W\d_]+", w)
)


def _signed(words: list[str], text: str, *, first: str, after_sign_off: bool, own_line: bool = False) -> bool:
    """Whether ``words`` are a name by themselves, as a signature must be. A capitalised word that is
    a common word of some language may still be a name ("Ben"), but not when all of them are
    ("Still Waiting", "Bonne Journée"). Where case says nothing, three words closing the message
    after a sentence are a name, or two on a line of their own (``own_line``)."""
    folded = [fold(w) for w in words]
    if any(w in NOT_SIGNED or w in WEEKDAYS for w in folded) or month(first):
        return False
    if any(IDENTIFIER_WORD.fullmatch(w) for w in words):
        return False
    if all(w in COMMON for w in folded) or any(common(w, COMMON) for w in words if caseless(w, text)):
        return False
    if after_sign_off:
        return True
    if (len(words) >= 3 or own_line) and case_blind(text):
        # where case says nothing, a run of three name words closing the message after a sentence
        # ("... been waiting 3 days. lucas pereira da costa"); two are as often a phrase ("box crushed"),
        # but not on a line of their own ("... bitte um hilfe\nemre kaya")
        return not any(WORD_FORM.fullmatch(w) for w in words)
    return all(upper(w) and not caseless(w, text) and not (w.isupper() and len(w) > 3) for w in words)
