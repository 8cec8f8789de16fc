"""Names of people: after a cue ("my name is", "this is", "Mr."), and without one, where a customer
answers a request for their name or opens a message with it ("Yes, Sarah Brown.", "Katarina Miller,
there has been ...", "Oluwaseun Adeyemi here").

No model: the registry has no named-entity model that ships its weights and runs offline with
onnxruntime (the README says which were tried), so names are found by their shape: runs of
capitalised words, or of words of a script without case (Arabic, Chinese, Hindi), with the
particles of many naming traditions ("van der", "de la", "bin") and the apostrophes and hyphens
inside names ("O'Connor", "Jean-Luc"). What keeps ordinary capitalised words out is a list of the words that start sentences,
greetings, weekdays, months and the words of places and products ("Hotel", "Street", "Visa"), never
a list of given names or surnames: "Nguyen Van An" is found the same way as "Sarah Brown".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from appliance.facts.text import APOS, MONTHS, WEEKDAYS, capitalised, fold

Add = Callable[[str, int, int, str], None]  # kind, start, end, norm

NAME_WORD = r"[^\W\d_][^\W\d_'’-]*(?:[-'’][^\W\d_]+)*"
PARTICLES = frozenset("van von de der den del della la le da di du dos ten ter al bin binti ibn".split())
_NAME_BODY = rf"(?P<name>{NAME_WORD}(?:\s+(?:(?:{'|'.join(sorted(PARTICLES))})\s+)?{NAME_WORD}){{0,2}})"

# First-person cues: the name that follows is the speaker's own. Scripts without spaces between
# words ("我叫王小明") need none after the cue.
_NAME_CUES = re.compile(
    r"(?<!\w)(?:(?i:my\s+name\s+is|my\s+name\s*" + APOS + r"\s*s|name\s*" + APOS + r"\s*s|call\s+me|"
    r"my\s+full\s+name\s+is|i\s*" + APOS + r"\s*m|i\s+am|speaking\s+with|you\s*" + APOS + r"\s*re\s+speaking\s+to|"
    r"mein\s+name\s+ist|ich\s+heiße|ich\s+heisse|hier\s+spricht|je\s+m\s*" + APOS + r"\s*appelle|je\s+suis|"
    r"mon\s+nom\s+est|me\s+llamo|mi\s+nombre\s+es|soy|ik\s+heet|mijn\s+naam\s+is|ik\s+ben|"
    r"mi\s+chiamo|il\s+mio\s+nome\s+è|meu\s+nome\s+é|me\s+chamo|nazywam\s+się|benim\s+adım|"
    r"меня\s+зовут|мо[её]\s+имя|με\s+λένε|ονομάζομαι|اسمي|मेरा\s+नाम)\s+|(?:我叫|我的名字是|我是|私の名前は)\s*)"
    + _NAME_BODY
)
# "Name: Sarah Brown", "Full name is Sarah Brown": a label at the start of a clause.
_NAME_LABEL = re.compile(r"(?:^|(?<=[.!?,;:\n]))\s*(?i:(?:full\s+)?name\s*(?:is|:))\s*" + _NAME_BODY)
# Second-person cues: the name that follows is the listener's ("your name is Dana", from an agent).
_YOUR_NAME = re.compile(
    r"(?<!\w)(?i:(?:your|the)\s+(?:full\s+)?name\s+(?:is|was|you\s+gave(?:\s+me)?\s+(?:is|was)|"
    r"on\s+(?:the|your)\s+(?:account|file|record|booking|reservation)\s+is)|under\s+the\s+name(?:\s+of)?|"
    r"you\s+(?:gave|told)\s+me\s+(?:the\s+name|your\s+name\s+as)|you\s+(?:are|were)\s+called|"
    r"ihr\s+name\s+(?:ist|lautet)|sie\s+heißen|votre\s+nom\s+est|vous\s+vous\s+appelez|su\s+nombre\s+es|"
    r"usted\s+se\s+llama|te\s+llamas|uw\s+naam\s+is|je\s+naam\s+is|u\s+heet)\s*:?\s+" + _NAME_BODY
)
# "This is Tom" introduces someone only at the start of a sentence or after a greeting, and only
# when the name ends the clause ("this is Tom from billing", not "this is Holy Trinity Church").
_THIS_IS = re.compile(
    r"(?:^|[.!?,;]\s*|(?i:hi|hello|hey|good\s+(?:morning|afternoon|evening))\W+)(?i:this\s+is)\s+"
    r"(?P<name>" + NAME_WORD + r"(?:\s+" + NAME_WORD + r")?)(?=\s*(?:[,.!?;]|$|(?i:from|speaking|here|with|at)\b))"
)
# "Oluwaseun Adeyemi here", "Tom speaking": a clause of its own, at the start of the message or a sentence.
_HERE = re.compile(
    r"(?:^|[.!?;]\s+|(?i:hi|hello|hey|good\s+(?:morning|afternoon|evening)|hallo|guten\s+(?:tag|morgen|abend)|"
    r"bonjour|bonsoir|hola|buenos\s+d[ií]as|goedemorgen|goedendag|hoi)\W+)"
    r"(?P<name>" + NAME_WORD + r"(?:\s+" + NAME_WORD + r"){0,2})\s+(?i:here|speaking|hier|ici|aquí|al\s+habla)"
    r"(?=\s*(?:[,.!?;:]|$))"
)
_TITLES = r"(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Herr|Frau|Mme|Mlle|Monsieur|Madame|Sr|Sra|Srta|Señor|Señora|Dhr|Mevr)"
_HONORIFIC = re.compile(r"(?<!\w)" + _TITLES + r"\.?\s+" + _NAME_BODY)
# A name spoken to: after a greeting or thanks, or alone between commas, then the end of the clause
# ("Thanks, Dana.", "Mr. Smith, your order..."), unlike one spoken of ("your appointment with Dr. Johnson").
_BEFORE_ADDRESSEE = re.compile(
    r"(?:^|[,;:.!?]|(?i:(?<!\w)(?:hi|hello|hey|dear|thanks|thank\s+you|welcome|bye|goodbye|sorry|hallo|bonjour|"
    r"hola|danke|merci|gracias|yes|sure|okay|ok|certainly)))\s*$"
)
_TITLE_BEFORE = re.compile(r"(?<!\w)" + _TITLES + r"\.?\s+$")
_AFTER_ADDRESSEE = re.compile(r"\s*(?:$|[,.!?;:])")
_GREETING_NAME = re.compile(
    r"(?i:(?<!\w)(?:hi|hello|hey|dear|thanks|thank\s+you|welcome|bye|goodbye|sorry|hallo|bonjour|hola|danke|merci|gracias))"
    r",?\s+(?P<name>" + NAME_WORD + r"(?:\s+" + NAME_WORD + r"){0,2})(?=\s*[,.!?;]|\s*$)"
)

# Words that follow "I'm", "this is", "thanks," without being a name.
_NOT_NAMES = frozenset(
    """
    a an the this that it i you he she we they me my your our his her their sir madam maam ma'am miss
    sorry afraid not so very really just also here there back glad happy sure okay ok fine good great
    looking interested trying going calling writing wondering hoping planning traveling travelling
    coming staying visiting new still done ready able unable unsure confused calling again all
    everyone everybody anyone someone team guys folks again much lot lots everything anything nothing
    bye goodbye welcome hello hi hey yes no please thanks thank cheers ja nein oui non si sí nee
    customer service support agent calling from with in on at for to of by about
    american canadian british english german french spanish dutch italian irish scottish australian
    mr mrs ms mx dr prof herr frau mme mlle monsieur madame sr sra srta señor señora dhr mevr
    """.split()
)
# Later words of a name may be short words of another language ("Nguyen Van An"), but not these.
_NOT_NAMES_AFTER = frozenset("i you he she we they and or but from with at for to of by in on the this that".split())
_COMMON_CAPITALISED = frozenset(
    """
    Yes No Sure Please Thanks Thank Hello Hi Hey Okay Ok Great Good Fine Just Also Not Sorry Afraid
    Here There What Which When Where Why How Can Could Would Will Should Do Does Did Is Are Was Were
    In On At For To From With About After Before Now Then Today Tomorrow Tonight Yesterday
    Interested Looking Calling Trying Going Happy Glad Ready Unable Able New Back Done
    """.split()
)
# Capitalised words that are no one's name where a name is expected without a cue: replies and
# fillers, words of time, and the words that make a run of capitals a place, a firm or a product.
_NOT_BARE = frozenset(
    fold(w)
    for w in """
    nope nah yeah yep yup alright right well oh ah um uh hmm wait hold hang let one moment sec second maybe
    perhaps actually anyway and but or so then if because though although however who whom whose
    i'm i'd i'll it's that's what's there's let's don't can't won't didn't isn't cool perfect
    awesome wonderful excellent nice fantastic brilliant lovely amazing correct exactly indeed true
    my our your his her its their some any no none every each both all other another next last first
    morning afternoon evening night noon midnight day days week weekend month year hour minute
    today tomorrow yesterday tonight am pm
    click look come sign stop start stay park get go put leave take give send call see check
    hotel hotels inn motel hostel house guesthouse lodge resort street st road rd avenue ave lane
    drive boulevard blvd square station airport terminal bank hospital clinic university college
    school church cathedral museum park centre center mall market restaurant cafe café bar pub
    theatre theater cinema gallery hall tower bridge city town village county state north south
    east west central downtown apartments apartment flat building office gym club pool plaza
    international airlines airways express group ltd inc llc gmbh corp company co limited
    bus train taxi cab uber lyft flight plane car ford bmw toyota honda tesla
    card visa mastercard amex paypal cash credit debit account iphone android windows google apple
    amazon premium gold platinum silver plus pro service services support team department desk
    los las el san santa saint fort port mount mt lake old great little upper lower
    straße strasse platz bahnhof flughafen gasse weg allee kirche klinik krankenhaus stadt
    rue gare aéroport hôtel banque calle estación aeropuerto banco avenida
    straat plein luchthaven laan gracht
    danke bitte hallo guten tag klar gerne genau doch also merci bonjour bonsoir salut oui
    gracias hola vale claro bueno dank hoi goedemorgen zeker prima
    """.split()
)

_WORD_AT = re.compile(r"[^\S\n]*(" + NAME_WORD + ")")
# What may follow a name given without a cue: the end of a clause, or a few words that continue it.
_AFTER_NAME = re.compile(
    r"[^\S\n]*(?:$|[,.!?;:…)/–—-]|(?i:(?:and|here|speaking|is\s+my\s+name|und|hier|et|ici|y|en)(?!\w)))"
)
_LEAD = re.compile(
    r"(?i)^[\W_]*(?:(?:yes|yeah|yep|yup|sure|ok(?:ay)?|of\s+course|certainly|right|well|so|um+|uh+|hi|hello|hey|"
    r"good\s+(?:morning|afternoon|evening)|ja|klar|gerne?|natürlich|oui|bien\s+s[uû]r|s[ií]|claro|zeker|"
    r"natuurlijk|jazeker|hallo|bonjour|hola)(?!\w)[\s,.:;!…-]*)*"
)
_IT_IS = re.compile(
    r"(?i)(?:it\s*" + APOS + r"?\s*s|it\s+is|that\s*" + APOS + r"?\s*s|that\s+is|this\s+is|it\s+was|"
    r"(?:my\s+)?(?:full\s+)?name\s*(?:" + APOS + r"\s*s|is|:)|es\s+ist|das\s+ist|c\s*" + APOS + r"\s*est|"
    r"es|dat\s+is|het\s+is)\s+"
)


def find_cued(text: str, add: Add) -> None:
    """Names after a cue, an honorific or a greeting (the extractor's names, in every turn)."""
    for pattern in _patterns(text):
        for m in pattern.finditer(text):
            start, end = m.start("name"), None
            for w in re.finditer(r"\S+", m["name"]):
                word = w.group()
                if word.casefold() in PARTICLES and end is not None:
                    continue
                if not capitalised(word) or word.casefold() in (_NOT_NAMES if end is None else _NOT_NAMES_AFTER):
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
    own = (_NAME_CUES, _NAME_LABEL, _THIS_IS, _HERE)
    return any(m.start("name") == start for p in _patterns(text) if p in own for m in p.finditer(text))


# Words without which a pattern cannot match: a cheap search first spares most messages the
# patterns, each of which tries its alternatives at every position of the text.
_HINTS: tuple[tuple[re.Pattern[str], re.Pattern[str] | None], ...] = tuple(
    (pattern, re.compile("|".join(re.escape(h) for h in hints)) if hints else None)
    for pattern, hints in (
        (
            _NAME_CUES,
            (
                "name", "call me", "i'm", "i’m", "i am", "i ’m", "i 'm", "speaking", "heiße", "heisse", "spricht",
                "appelle", "je suis", "nom", "llamo", "nombre", "soy", "heet", "naam", "ik ben", "chiamo", "nome",
                "chamo", "nazywam", "adım", "зовут", "имя", "λένε", "ονομάζομαι", "اسمي", "नाम", "我", "私",
            ),
        ),
        (_NAME_LABEL, ("name",)),
        (_YOUR_NAME, ("name", "heißen", "nom", "nombre", "naam", "heet", "llama", "called", "appelez")),
        (_THIS_IS, ("this is",)),
        (_HERE, ("here", "speaking", "hier", "ici", "aquí", "habla")),
        (_HONORIFIC, ()),
        (_GREETING_NAME, ("hi", "hello", "hey", "dear", "thank", "welcome", "bye", "sorry", "hallo", "bonjour",
                          "hola", "danke", "merci", "gracias")),
    )
)  # fmt: skip


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
    Brown.", "It's Angela", "Ben...wait", "Katarina Miller, account number is 95381901."."""
    lead = _LEAD.match(text)
    pos = lead.end() if lead else 0
    it_is = _IT_IS.match(text, pos)
    if it_is:
        pos = it_is.end()
    return _run(text, pos, min_words=1)


def opening_name(text: str) -> tuple[int, int] | None:
    """The span of a full name a customer opens a message with, unasked ("Katarina Miller, there has
    been a transfer I did not make"): two words or more, then the end of the clause."""
    lead = _LEAD.match(text)
    return _run(text, lead.end() if lead else 0, min_words=2, clause=True)


def _run(text: str, pos: int, *, min_words: int, clause: bool = False) -> tuple[int, int] | None:
    """A run of capitalised name words starting at ``pos``, followed by what may follow a name."""
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
        if not capitalised(word) or len(word) > 30 or not _bare_word_ok(word, words == 0):
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
