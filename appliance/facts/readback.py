"""Read-back questions: which facts a customer asks to hear again, and whether an answer gave them.

"Can you read back the account number I gave you?", "What name did I give you?", "Wie war meine
Kontonummer?": the answer must hold the ledger's value. Small responders often do not give it back
even when it is in the prompt ("Yes, I can read back the account number you gave me."), so the
turn layer puts the asked facts right before the question (``PromptSpec.readback``) and, when the
answer still lacks them, repairs it: a retry with the value named, else a fixed phrase built from
the ledger (:func:`phrase`).

A read-back question has two parts, both found by code: a *topic* (account number, name, date of
birth, phone number, reference...), which says which ledger kinds to read, and a *request* for
something said before ("read back", "remind me", "did I give you", "what was my", "again" after a
question word), in English, German, French, Spanish and Dutch. A topic without a request ("I need
a new card") is not one, nor is a request without a topic. The request's language is the language
of the fixed phrase.

Pure functions over text and ledger entries; imports only leaves and its own folder.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from appliance.facts.entities import compact, extract, index_keys, lookup_keys
from appliance.types import Entity, Finding, LedgerEntry, current_facts

LANGUAGES = ("en", "de", "fr", "es", "nl")

# Most facts read back per topic: the newest ones (a prompt part, and a phrase, stay short).
MAX_FACTS = 3


@dataclass(frozen=True)
class Topic:
    """What can be asked back: the ledger kinds that hold it, best first, and whether the
    customer's own value (slot ``kind:customer``) is meant when there is one."""

    name: str
    kinds: tuple[str, ...]
    fallback: tuple[str, ...] = ()
    own: bool = False


# In matching order: a longer, more specific topic takes its words first ("date of birth" before
# "date", "email address" before "address", "account number" before a bare "number").
TOPICS: tuple[Topic, ...] = (
    Topic("birthdate", ("birthdate", "dob", "birthday"), fallback=("date",), own=True),
    Topic("email", ("email",), own=True),
    Topic("phone", ("phone",), own=True),
    Topic("postcode", ("postcode",), own=True),
    Topic("address", ("address",), own=True),
    Topic("account", ("account", "card"), fallback=("number",), own=True),
    Topic("train", ("train",), fallback=("reference",)),
    Topic("order", ("order",), fallback=("reference", "number")),
    Topic("case", ("case",), fallback=("reference", "number")),
    Topic("reference", ("reference",), fallback=("order", "case", "number")),
    Topic("amount", ("amount",)),
    Topic("name", ("name",), own=True),
    Topic("date", ("date",)),
    Topic("time", ("time",)),
)
_BY_NAME = {t.name: t for t in TOPICS}

# Topic words per language, written lower case without accents (text is folded before matching).
_TOPIC_WORDS: dict[str, dict[str, str]] = {
    "birthdate": {
        "en": r"date\s+of\s+birth|birth\s*date|birthday|dob|d\.o\.b\.?",
        "de": r"geburtsdatum|geburtstag",
        "fr": r"date\s+de\s+naissance",
        "es": r"fecha\s+de\s+nacimiento|cumpleanos",
        "nl": r"geboortedatum|verjaardag",
    },
    "email": {
        "en": r"e-?mail(?:\s+address)?",
        "de": r"e-?mail(?:-?adresse)?",
        "fr": r"(?:adresse\s+)?e-?mail|courriel",
        "es": r"correo(?:\s+electronico)?|e-?mail",
        "nl": r"e-?mail(?:adres)?",
    },
    "phone": {
        "en": r"(?:tele)?phone(?:\s+number)?|mobile(?:\s+number)?|cell(?:\s+number)?|contact\s+number|number\s+to\s+call",
        "de": r"telefonnummer|handynummer|rufnummer|mobilnummer|telefon",
        "fr": r"numero\s+de\s+(?:telephone|portable)|telephone|portable",
        "es": r"numero\s+de\s+(?:telefono|movil|celular)|telefono|movil|celular",
        "nl": r"telefoonnummer|telefoon|mobiel(?:e)?\s+nummer|gsm(?:-?nummer)?",
    },
    "postcode": {
        "en": r"post\s*code|postal\s+code|zip(?:\s*code)?",
        "de": r"postleitzahl|plz",
        "fr": r"code\s+postal",
        "es": r"codigo\s+postal",
        "nl": r"postcode",
    },
    "address": {
        "en": r"(?:home\s+|street\s+|postal\s+)?address",
        "de": r"adresse|anschrift",
        "fr": r"adresse",
        "es": r"direccion|domicilio",
        "nl": r"adres",
    },
    "account": {
        "en": r"account(?:\s+(?:number|no\.?|#))?|acct|card(?:\s+number)?|iban",
        "de": r"kontonummer|konto|kartennummer|karte|iban",
        "fr": r"numero\s+de\s+(?:compte|carte)|compte|carte|iban",
        "es": r"numero\s+de\s+(?:cuenta|tarjeta)|cuenta|tarjeta|iban",
        "nl": r"rekeningnummer|rekening|kaartnummer|pasnummer|iban",
    },
    "train": {
        "en": r"train(?:\s+(?:id|number|no\.?))?",
        "de": r"zugnummer|zug",
        "fr": r"(?:numero\s+de\s+)?train",
        "es": r"(?:numero\s+de\s+)?tren",
        "nl": r"treinnummer|trein",
    },
    "order": {
        "en": r"order(?:\s+(?:number|no\.?|id))?|tracking\s+number|invoice\s+number",
        "de": r"bestellnummer|bestellung|sendungsnummer|rechnungsnummer|auftragsnummer",
        "fr": r"numero\s+de\s+(?:commande|suivi|facture)|commande",
        "es": r"numero\s+de\s+(?:pedido|seguimiento|factura)|pedido",
        "nl": r"bestelnummer|bestelling|trackingnummer|factuurnummer",
    },
    "case": {
        "en": r"(?:case|ticket|claim|complaint)(?:\s+(?:number|no\.?|id))?",
        "de": r"vorgangsnummer|fallnummer|ticketnummer|aktenzeichen",
        "fr": r"numero\s+de\s+(?:dossier|ticket|reclamation)|dossier",
        "es": r"numero\s+de\s+(?:caso|incidencia|ticket|reclamacion)",
        "nl": r"zaaknummer|dossiernummer|ticketnummer",
    },
    "reference": {
        "en": r"(?:booking|reservation|confirmation)\s+(?:number|reference|code|id)|reference(?:\s+(?:number|code))?|"
        r"ref(?:\s+(?:number|no\.?))?|confirmation",
        "de": r"referenz(?:nummer)?|buchungs(?:nummer|code)|bestatigungs(?:nummer|code)|reservierungsnummer",
        "fr": r"(?:numero\s+de\s+)?reference|numero\s+de\s+(?:reservation|confirmation)|code\s+de\s+reservation",
        "es": r"(?:numero\s+de\s+)?referencia|(?:numero|codigo)\s+de\s+(?:reserva|confirmacion)|localizador",
        "nl": r"referentie(?:nummer)?|boekingsnummer|reserveringsnummer|bevestigingsnummer|boekingscode",
    },
    "amount": {
        "en": r"how\s+much|amount|money|sum|price|cost|fee|total",
        "de": r"wie\s*viel|betrag|geld|summe|preis|kosten|gebuhr",
        "fr": r"combien|montant|argent|somme|prix|cout|frais",
        "es": r"cuanto|importe|cantidad|dinero|suma|precio|coste|costo|tarifa",
        "nl": r"hoeveel|bedrag|geld|som|prijs|kosten",
    },
    "name": {
        "en": r"(?:full\s+|first\s+|last\s+|sur)?name",
        "de": r"(?:vor|nach|familien)?namen?",
        "fr": r"nom(?:\s+complet|\s+de\s+famille)?|prenom",
        "es": r"nombre(?:\s+completo)?|apellidos?",
        "nl": r"(?:volledige\s+|achter|voor)?naam",
    },
    "date": {
        "en": r"date|(?:which|what)\s+day",
        "de": r"datum",
        "fr": r"date",
        "es": r"fecha",
        "nl": r"datum",
    },
    "time": {
        "en": r"what\s+time|time",
        "de": r"uhrzeit|wie\s+spat",
        "fr": r"heure",
        "es": r"hora",
        "nl": r"hoe\s+laat|tijd",
    },
}

# A request for something said before. Strong cues are enough on their own; weak ones ("again",
# "noch einmal") only with a question word or a verb of telling in the same sentence, so that
# "can I get a new card again?" is not a request to read a card number back.
_STRONG: dict[str, str] = {
    "en": r"(?:read|say|give|repeat|spell|play)\b[^.?!]{0,25}\bback|remind\s+me|remember\s+my|"
    r"(?:did|do)\s+i\s+(?:give|tell|say|provide|mention|use|share)|"
    r"i\s+(?:gave|told|said|provided|mentioned|used|shared)(?:\s+you)?|"
    r"you\s+(?:gave|told|sent|quoted|read|had)\s+me|you\s+have\s+(?:for|on\s+file\s+for)\s+me|"
    r"what(?:'s|\s+is|\s+was|\s+were)\s+(?:my|our)|(?:which|what)\b[^.?!]{0,40}\b(?:was|were)\s+(?:that|it|those)|"
    r"do\s+you\s+(?:have|know|remember)\s+my|(?:confirm|repeat|read)\s+(?:my|our|the|that|it)",
    "de": r"wie\s+(?:war|lautet(?:e)?|ist)\s+(?:meine?|unsere?)|was\s+(?:war|ist)\s+(?:meine?|unsere?)|"
    r"(?:wiederholen|vorlesen|wiederholt)|erinnern\s+sie\s+mich|erinnere\s+mich|"
    r"hab(?:e)?\s+ich\b[^.?!]{0,25}\b(?:gegeben|genannt|gesagt|mitgeteilt|angegeben)|"
    r"sie\s+mir\b[^.?!]{0,20}\b(?:gegeben|genannt|gesagt|mitgeteilt)|"
    r"ich\s+(?:ihnen|dir)\b[^.?!]{0,20}\b(?:gegeben|genannt|gesagt|mitgeteilt)",
    "fr": r"quel(?:le)?s?\s+(?:etait|etaient|est|sont)\s+(?:mon|ma|mes|notre|nos)|rappel(?:ez|le|er)[-\s]moi|me\s+rappeler|"
    r"repet(?:er|ez)|relire|relisez|vous\s+ai[-\s]je\s+(?:donne|dit|communique|indique)|"
    r"je\s+vous\s+ai\s+(?:donne|dit|communique|indique)|vous\s+m'avez\s+(?:donne|dit|communique)",
    "es": r"cual\s+(?:era|es|fue)n?\s+(?:mi|mis|nuestro|nuestra)|me\s+(?:recuerda|puede\s+recordar)|recuerdame|"
    r"recordarme|repetir(?:me)?|repita(?:me)?|repiteme|leerme|leame|"
    r"(?:le|te|les)\s+(?:di|dije|facilite|indique)|me\s+(?:dio|diste|dijo|dijiste)",
    "nl": r"wat\s+(?:was|is)\s+(?:mijn|ons|onze)|herinner\s+(?:me|mij)|herhalen|herhaal|voorlezen|teruglezen|"
    r"heb\s+ik\b[^.?!]{0,25}\b(?:gegeven|genoemd|gezegd|opgegeven|doorgegeven)|"
    r"(?:u|je)\s+(?:mij|me)\b[^.?!]{0,20}\b(?:gegeven|gezegd|doorgegeven)",
}
_WEAK: dict[str, str] = {
    "en": r"again|once\s+more|one\s+more\s+time",
    "de": r"noch\s*(?:ein)?mal|nochmals|erneut",
    "fr": r"a\s+nouveau|de\s+nouveau|encore\s+une\s+fois|encore",
    "es": r"de\s+nuevo|otra\s+vez|nuevamente",
    "nl": r"nog\s+(?:een\s+keer|eens)|nogmaals|opnieuw",
}
_ASKING: dict[str, str] = {
    "en": r"what|which|how|tell|say|give|read|repeat|remind|confirm",
    "de": r"wie|was|welche[rsnm]?|sagen|nennen|geben|bestatigen",
    "fr": r"quel(?:le)?s?|combien|dire|dites|donner|donnez|confirmer|confirmez",
    "es": r"cual(?:es)?|que|cuanto|decir|dime|digame|dar|confirmar|confirme",
    "nl": r"wat|welke|hoeveel|zeggen|zeg|geven|bevestigen",
}


def _compile(table: dict[str, str]) -> dict[str, re.Pattern[str]]:
    return {lang: re.compile(r"(?<![\w-])(?:" + pattern + r")(?![\w-])") for lang, pattern in table.items()}


_STRONG_RE = _compile(_STRONG)
_WEAK_RE = _compile(_WEAK)
_ASKING_RE = _compile(_ASKING)
_TOPIC_RE = re.compile(
    r"(?<![\w-])(?:"
    + "|".join(f"(?P<{t.name}>" + "|".join(_TOPIC_WORDS[t.name].values()) + ")" for t in TOPICS)
    + r")(?![\w-])"
)
# "At the start", "originally": the first value given, not the current one.
_FIRST_RE = re.compile(
    r"(?<![\w-])(?:at\s+the\s+(?:start|beginning)|in\s+the\s+beginning|first(?!\s+name)|originally|initially|"
    r"to\s+begin\s+with|am\s+anfang|zu\s+beginn|zuerst|anfangs|ursprunglich|als\s+erstes|au\s+debut|d'abord|"
    r"au\s+depart|initialement|en\s+premier|al\s+principio|al\s+comienzo|al\s+inicio|primero|inicialmente|"
    r"originalmente|in\s+het\s+begin|aan\s+het\s+begin|eerst|oorspronkelijk|aanvankelijk)(?![\w-])"
)
_SENTENCES = re.compile(r"[^.?!;\n]+[.?!;]*")


def _fold(text: str) -> str:
    """Lower case, without accents, one kind of apostrophe: the form the cue lists are written in."""
    decomposed = unicodedata.normalize("NFKD", text.casefold().replace("’", "'"))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@dataclass(frozen=True)
class Request:
    """A read-back question: the topics asked for, in the order asked, the question's language, and
    whether it asks for the first value given ("what name did I give you at the start?")."""

    topics: tuple[str, ...]
    language: str = "en"
    first: bool = False


@dataclass(frozen=True)
class Asked:
    """One topic asked for and the ledger's current facts that answer it, oldest first."""

    topic: str
    facts: tuple[LedgerEntry, ...]


def request(message: str) -> Request | None:
    """The read-back request in ``message``, if it is one: a topic and a request in one sentence."""
    text = _fold(message)
    topics: list[str] = []
    language = ""
    first = False
    for sentence in _SENTENCES.findall(text):
        lang = _requesting(sentence)
        if lang is None:
            continue
        found = [m.lastgroup for m in _TOPIC_RE.finditer(sentence) if m.lastgroup]
        if found:
            topics.extend(t for t in found if t not in topics)
            language = language or lang
            first = first or bool(_FIRST_RE.search(sentence))
    return Request(tuple(topics), language or "en", first) if topics else None


def _requesting(sentence: str) -> str | None:
    """The language of the request cue in ``sentence``, or None when it asks for nothing said before."""
    for lang in LANGUAGES:
        if _STRONG_RE[lang].search(sentence):
            return lang
    for lang in LANGUAGES:
        if _WEAK_RE[lang].search(sentence) and _ASKING_RE[lang].search(sentence):
            return lang
    return None


def wanted(req: Request | None, ledger: Sequence[LedgerEntry]) -> tuple[Asked, ...]:
    """For each topic of ``req``, the ledger's facts that answer it: its current facts
    (``appliance.types.current_facts``), or, when the question asks for the first value given, the
    first entry of each slot (a corrected or later name does not hide the one given at the start).

    A topic reads its own kinds first and its fallback kinds only when those hold nothing (a bare
    8-digit run is a ``number`` until something says it is an account); for the customer's own
    things (name, phone, account...) their own value is meant when there is one, not the agent's
    name or a shop's phone. Topics with nothing in the ledger are left out.
    """
    if req is None:
        return ()
    if req.first:
        ordered = sorted(ledger, key=lambda e: e.turn)
        facts: Sequence[LedgerEntry] = list({(e.slot or f"{e.kind}={e.norm}"): e for e in reversed(ordered)}.values())
        facts = sorted(facts, key=lambda e: e.turn)
    else:
        facts = current_facts(ledger)
    out: list[Asked] = []
    taken: set[tuple[str, str]] = set()
    for name in req.topics:
        topic = _BY_NAME[name]
        chosen: list[LedgerEntry] = []
        for kinds in (topic.kinds, topic.fallback):
            chosen = [e for e in facts if e.kind in kinds or e.slot.split(":")[0].split("=")[0] in kinds]
            if chosen:
                break
        if topic.own:
            own = [e for e in chosen if e.slot.endswith(":customer")]
            chosen = own or chosen
        chosen = [e for e in chosen if (e.kind, e.norm or e.value) not in taken]
        chosen = chosen[:1] if req.first else chosen[-MAX_FACTS:]
        if chosen:
            taken.update((e.kind, e.norm or e.value) for e in chosen)
            out.append(Asked(name, tuple(chosen)))
    return tuple(out)


def facts_of(asked: Sequence[Asked]) -> tuple[LedgerEntry, ...]:
    """The facts of every topic asked, by turn (the prompt's read-back part)."""
    return tuple(sorted({e: None for a in asked for e in a.facts}, key=lambda e: e.turn))


def states(answer: str, fact: LedgerEntry) -> bool:
    """Whether ``answer`` states ``fact``: its characters (without case, spaces, punctuation or
    accents), or an entity the normaliser equates ("$500" and "500 dollars", "10/08/1980" and
    "October 8, 1980")."""
    value = compact(fact.value)
    if value and value in compact(answer):
        return True
    return bool(fact.norm) and any(same_value(fact.kind, fact.norm, e) for e in extract(answer))


_YEAR = re.compile(r"(?:19|20)\d\d")
# A date of birth is a date in another role: "born on October 8, 1980" states "10/08/1980".
_DATE_KINDS = {"birthdate": "date", "dob": "date", "birthday": "date"}


def same_value(kind: str, norm: str, entity: Entity) -> bool:
    """Whether ``entity`` is the value ``kind``/``norm`` in another form, as the checker matches a
    quoted fact (:func:`~appliance.facts.entities.lookup_keys` against ``index_keys``); two dates
    that both carry a year must agree on it."""
    said = set(index_keys(_DATE_KINDS.get(kind, kind), norm))
    keys = [k for k in lookup_keys(_DATE_KINDS.get(entity.kind, entity.kind), entity.norm) if k in said]
    if not keys:
        return False
    said_year, its_year = _YEAR.search(norm), _YEAR.search(entity.norm)
    if keys[0].startswith("date:") and said_year and its_year:
        return said_year.group() == its_year.group()
    return True


def lacking(answer: str, asked: Sequence[Asked]) -> tuple[Asked, ...]:
    """The topics of which ``answer`` states none of the ledger's values."""
    return tuple(a for a in asked if not any(states(answer, e) for e in a.facts))


def findings(asked: Sequence[Asked]) -> tuple[Finding, ...]:
    """One ``missing`` finding per fact an answer should have read back; the entity is the ledger's
    value (``start``/``end`` -1: it is not in the answer)."""
    return tuple(
        Finding(Entity(e.kind, e.value, -1, -1, e.norm), "missing", expected=e.value) for a in asked for e in a.facts
    )


# The fixed phrase of a repair, per language: (singular, plural) of each topic, a verb for one and
# for several values, and the word that joins the last two.
_LABELS: dict[str, dict[str, tuple[str, str]]] = {
    "en": {
        "birthdate": ("Your date of birth", "The dates of birth I have"),
        "email": ("Your email address", "The email addresses I have"),
        "phone": ("Your phone number", "The phone numbers I have"),
        "postcode": ("Your postcode", "The postcodes I have"),
        "address": ("Your address", "The addresses I have"),
        "account": ("Your account number", "The account numbers I have"),
        "train": ("The train", "The trains I have"),
        "order": ("Your order number", "The order numbers I have"),
        "case": ("Your case number", "The case numbers I have"),
        "reference": ("Your reference", "The references I have"),
        "amount": ("The amount", "The amounts I have"),
        "name": ("Your name", "The names I have"),
        "date": ("The date", "The dates I have"),
        "time": ("The time", "The times I have"),
    },
    "de": {
        "birthdate": ("Ihr Geburtsdatum", "Die Geburtsdaten"),
        "email": ("Ihre E-Mail-Adresse", "Die E-Mail-Adressen"),
        "phone": ("Ihre Telefonnummer", "Die Telefonnummern"),
        "postcode": ("Ihre Postleitzahl", "Die Postleitzahlen"),
        "address": ("Ihre Adresse", "Die Adressen"),
        "account": ("Ihre Kontonummer", "Die Kontonummern"),
        "train": ("Der Zug", "Die Züge"),
        "order": ("Ihre Bestellnummer", "Die Bestellnummern"),
        "case": ("Ihre Vorgangsnummer", "Die Vorgangsnummern"),
        "reference": ("Ihre Referenz", "Die Referenzen"),
        "amount": ("Der Betrag", "Die Beträge"),
        "name": ("Ihr Name", "Die Namen"),
        "date": ("Das Datum", "Die Daten"),
        "time": ("Die Uhrzeit", "Die Uhrzeiten"),
    },
    "fr": {
        "birthdate": ("Votre date de naissance", "Les dates de naissance"),
        "email": ("Votre adresse e-mail", "Les adresses e-mail"),
        "phone": ("Votre numéro de téléphone", "Les numéros de téléphone"),
        "postcode": ("Votre code postal", "Les codes postaux"),
        "address": ("Votre adresse", "Les adresses"),
        "account": ("Votre numéro de compte", "Les numéros de compte"),
        "train": ("Le train", "Les trains"),
        "order": ("Votre numéro de commande", "Les numéros de commande"),
        "case": ("Votre numéro de dossier", "Les numéros de dossier"),
        "reference": ("Votre référence", "Les références"),
        "amount": ("Le montant", "Les montants"),
        "name": ("Votre nom", "Les noms"),
        "date": ("La date", "Les dates"),
        "time": ("L'heure", "Les heures"),
    },
    "es": {
        "birthdate": ("Su fecha de nacimiento", "Las fechas de nacimiento"),
        "email": ("Su correo electrónico", "Los correos electrónicos"),
        "phone": ("Su número de teléfono", "Los números de teléfono"),
        "postcode": ("Su código postal", "Los códigos postales"),
        "address": ("Su dirección", "Las direcciones"),
        "account": ("Su número de cuenta", "Los números de cuenta"),
        "train": ("El tren", "Los trenes"),
        "order": ("Su número de pedido", "Los números de pedido"),
        "case": ("Su número de caso", "Los números de caso"),
        "reference": ("Su referencia", "Las referencias"),
        "amount": ("El importe", "Los importes"),
        "name": ("Su nombre", "Los nombres"),
        "date": ("La fecha", "Las fechas"),
        "time": ("La hora", "Las horas"),
    },
    "nl": {
        "birthdate": ("Uw geboortedatum", "De geboortedata"),
        "email": ("Uw e-mailadres", "De e-mailadressen"),
        "phone": ("Uw telefoonnummer", "De telefoonnummers"),
        "postcode": ("Uw postcode", "De postcodes"),
        "address": ("Uw adres", "De adressen"),
        "account": ("Uw rekeningnummer", "De rekeningnummers"),
        "train": ("De trein", "De treinen"),
        "order": ("Uw bestelnummer", "De bestelnummers"),
        "case": ("Uw zaaknummer", "De zaaknummers"),
        "reference": ("Uw referentie", "De referenties"),
        "amount": ("Het bedrag", "De bedragen"),
        "name": ("Uw naam", "De namen"),
        "date": ("De datum", "De data"),
        "time": ("De tijd", "De tijden"),
    },
}
_VERBS = {"en": ("is", "are"), "de": ("ist", "sind"), "fr": ("est", "sont"), "es": ("es", "son"), "nl": ("is", "zijn")}
_AND = {"en": "and", "de": "und", "fr": "et", "es": "y", "nl": "en"}


def phrase(asked: Sequence[Asked], language: str = "en") -> str:
    """The ledger's answer in a fixed phrase: "Your account number is 95381901." (in ``language``
    when it is one of :data:`LANGUAGES`, else English); the values exactly as they were said."""
    lang = language if language in _LABELS else "en"
    one, many = _VERBS[lang]
    out = []
    for a in asked:
        singular, plural = _LABELS[lang][a.topic]
        values = [e.value for e in a.facts]
        if len(values) == 1:
            out.append(f"{singular} {one} {values[0]}.")
        else:
            out.append(f"{plural} {many} {', '.join(values[:-1])} {_AND[lang]} {values[-1]}.")
    return " ".join(out)


def instruction(asked: Sequence[Asked]) -> str:
    """The line added to a read-back question's instruction: the values asked for, to be stated.

    Said of the customer in the third person ("the customer's name: Brian White"): with "your name"
    a small responder answers "My name is Brian White.", and with "read back what they gave" it
    repeats the instruction ("Sure, I can read back what the customer gave earlier."). "Not a yes
    or no": greedy, it answered "Can you read back my account number?" with "Yes, I can read back
    the account number you gave me." on every STAR account probe.
    """
    values = "; ".join(f"{_about(a.topic)}: {', '.join(e.value for e in a.facts)}" for a in asked)
    return f"Reply with the values themselves, not a yes or no, written exactly as here: {values}."


def _about(topic: str) -> str:
    label = _LABELS["en"][topic][0].split(" ", 1)[1]  # "Your account number" -> "account number"
    return f"the customer's {label}" if _BY_NAME[topic].own else f"the {label}"
