"""Slot answers: what the agent just asked for says what the customer's bare reply carries.

Customers answer a question with the value alone: "Could I get your full name, please?" →
"Yes, Sarah Brown."; "Can you tell me your account number?" → "It's 153531981."; "Right, and your
PIN as well please." → "3941". The reply has no cue ("my name is"), so the extractor alone sees
nothing, or only "a number". Here the agent's previous turn decides: its request cues name the
kinds asked for, and the reply's values of that shape are read as those kinds, a secret as a
secret (:mod:`appliance.facts.secrets`).

The cues are phrases per language and kind, built in for English, German, French, Spanish and
Dutch; ``facts.request_cues`` in the settings adds languages or replaces one language's list of a
kind (an empty list turns it off), as ``stage.late_cues`` does for the stage's cues. A cue counts in
a sentence that asks (a question mark, "please", "could you"...), so "your account number is
12345678." is not a request.

Pure functions of the two turns' text: the ledger stays a function of the transcript.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from appliance.facts import names, secrets
from appliance.facts.entities import extract, spaced
from appliance.facts.text import compact, digits
from appliance.types import Entity, Turn

RequestCues = Mapping[str, Mapping[str, Sequence[str]]]

REQUEST_CUES: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "name": (
            "your name", "your full name", "your first name", "your last name", "your surname",
            "your family name", "name on the account", "name on the card", "who am i speaking with",
            "who am i speaking to", "who is calling", "whom am i speaking",
        ),
        "account": (
            "account number", "your account", "account no", "customer number", "membership number",
            "member number", "policy number", "iban", "customer id", "account id",
        ),
        "card": ("card number", "long number on the card", "number on your card"),
        "reference": (
            "booking reference", "booking number", "reference number", "reference code", "confirmation number",
            "confirmation code", "reservation number", "booking code", "booking id", "your reference",
        ),
        "order": ("order number", "order id", "invoice number", "tracking number", "receipt number"),
        "case": ("case number", "ticket number", "claim number", "complaint number", "incident number"),
        "birthdate": ("date of birth", "birth date", "birthdate", "your birthday", "dob", "d o b", "when were you born"),
        "phone": (
            "phone number", "your phone", "mobile number", "telephone number", "contact number", "cell number",
            "callback number", "number we can reach you",
        ),
        "email": ("email", "e mail", "email address", "e mail address"),
        "postcode": ("postcode", "post code", "postal code", "zip code", "zip", "zipcode"),
        "address": (
            "your address", "home address", "street address", "billing address", "postal address",
            "delivery address", "shipping address", "where do you live",
        ),
        "pin": ("pin", "pin number", "pin code"),
        "cvv": ("security code", "cvv", "cvc", "three digits on the back", "3 digits on the back", "card verification"),
        "password": ("password", "passcode"),
        "otp": (
            "one time code", "one time password", "verification code", "code we sent", "code i sent",
            "code we texted", "sms code", "otp",
        ),
        "open": ("how can i help", "how may i help", "how can i assist", "what can i do for you", "how can we help"),
    },
    "de": {
        "name": (
            "ihren namen", "ihr name", "ihren vollständigen namen", "ihr vollständiger name", "ihren vor und nachnamen",
            "wie heißen sie", "wie ist ihr name", "wie lautet ihr name", "dein name", "deinen namen", "wie heißt du",
        ),
        "account": ("kontonummer", "kundennummer", "iban", "mitgliedsnummer", "vertragsnummer"),
        "card": ("kartennummer",),
        "reference": (
            "buchungsnummer", "referenznummer", "bestätigungsnummer", "reservierungsnummer", "buchungscode",
        ),
        "order": ("bestellnummer", "auftragsnummer", "rechnungsnummer", "sendungsnummer"),
        "case": ("vorgangsnummer", "ticketnummer", "fallnummer", "schadensnummer"),
        "birthdate": ("geburtsdatum", "geburtstag", "wann sind sie geboren"),
        "phone": ("telefonnummer", "handynummer", "mobilnummer", "rufnummer"),
        "email": ("e mail", "email", "e mail adresse", "mailadresse"),
        "postcode": ("postleitzahl", "plz"),
        "address": ("adresse", "anschrift", "wohnadresse", "lieferadresse"),
        "pin": ("pin", "geheimzahl", "pin nummer"),
        "cvv": ("prüfnummer", "kartenprüfnummer", "sicherheitscode", "cvv", "cvc"),
        "password": ("passwort", "kennwort"),
        "otp": ("tan", "einmalcode", "sms code", "verifizierungscode", "bestätigungscode aus der sms"),
        "open": ("wie kann ich ihnen helfen", "wie kann ich helfen", "was kann ich für sie tun"),
    },
    "fr": {
        "name": ("votre nom", "votre nom complet", "vos nom et prénom", "votre prénom", "comment vous appelez vous"),
        "account": ("numéro de compte", "numéro client", "iban", "numéro d'adhérent"),
        "card": ("numéro de carte",),
        "reference": (
            "numéro de réservation", "référence", "numéro de confirmation", "code de réservation",
        ),
        "order": ("numéro de commande", "numéro de facture", "numéro de suivi"),
        "case": ("numéro de ticket", "numéro de dossier", "numéro de réclamation"),
        "birthdate": ("date de naissance",),
        "phone": ("numéro de téléphone", "numéro de portable", "téléphone"),
        "email": ("adresse e mail", "e mail", "email", "courriel", "adresse électronique", "adresse mail"),
        "postcode": ("code postal",),
        "address": ("adresse", "votre adresse", "adresse postale"),
        "pin": ("code pin", "pin", "code secret", "code confidentiel"),
        "cvv": ("cryptogramme", "code de sécurité", "cvv"),
        "password": ("mot de passe",),
        "otp": ("code de vérification", "code à usage unique", "code reçu par sms", "code sms"),
        "open": ("comment puis je vous aider", "que puis je faire pour vous"),
    },
    "es": {
        "name": ("su nombre", "tu nombre", "su nombre completo", "cómo se llama", "cómo te llamas", "nombre y apellido"),
        "account": ("número de cuenta", "número de cliente", "iban"),
        "card": ("número de tarjeta",),
        "reference": (
            "número de reserva", "número de referencia", "código de reserva", "número de confirmación", "localizador",
        ),
        "order": ("número de pedido", "número de factura", "número de seguimiento"),
        "case": ("número de caso", "número de ticket", "número de incidencia", "número de reclamación"),
        "birthdate": ("fecha de nacimiento",),
        "phone": ("número de teléfono", "teléfono", "número de móvil", "celular"),
        "email": (
            "correo electrónico", "correo", "email", "e mail", "dirección de correo electrónico", "dirección de correo",
            "dirección de email",
        ),
        "postcode": ("código postal",),
        "address": ("dirección", "su dirección", "domicilio"),
        "pin": ("pin", "número secreto", "clave"),
        "cvv": ("código de seguridad", "cvv"),
        "password": ("contraseña",),
        "otp": ("código de verificación", "código de un solo uso", "código que le enviamos", "código sms"),
        "open": ("en qué puedo ayudarle", "en qué le puedo ayudar", "cómo puedo ayudarle", "en qué puedo ayudarte"),
    },
    "nl": {
        "name": ("uw naam", "je naam", "uw volledige naam", "hoe heet u", "hoe heet je", "uw voor en achternaam"),
        "account": ("rekeningnummer", "klantnummer", "iban", "lidnummer"),
        "card": ("kaartnummer",),
        "reference": ("reserveringsnummer", "boekingsnummer", "referentienummer", "bevestigingsnummer"),
        "order": ("bestelnummer", "ordernummer", "factuurnummer", "trackingnummer"),
        "case": ("zaaknummer", "ticketnummer", "klachtnummer", "dossiernummer"),
        "birthdate": ("geboortedatum",),
        "phone": ("telefoonnummer", "mobiele nummer", "gsm nummer"),
        "email": ("e mailadres", "e mail", "email", "emailadres"),
        "postcode": ("postcode",),
        "address": ("adres", "uw adres", "woonadres"),
        "pin": ("pincode", "pin"),
        "cvv": ("beveiligingscode", "cvc", "cvv"),
        "password": ("wachtwoord",),
        "otp": ("verificatiecode", "eenmalige code", "sms code"),
        "open": ("waarmee kan ik u helpen", "hoe kan ik u helpen", "wat kan ik voor u doen"),
    },
}  # fmt: skip

# A sentence that asks: a question mark, or a word of asking.
_ASKS = re.compile(
    r"(?i)\?|(?<!\w)(?:please|pls|could|can|may|would|need|tell|give|provide|confirm|enter|type|share|"
    r"bitte|können|könnten|geben|nennen|brauche|benötige|s'il\s+vous\s+plaît|pouvez|pourriez|donner|indiquer|"
    r"por\s+favor|puede|podría|necesito|indicar|alstublieft|graag|kunt|kun|mag)(?!\w)"
)
# "Can you provide the correct one?" after "... without a valid PIN.": the request points back.
_POINTS_BACK = re.compile(r"(?i)(?<!\w)(?:one|it|that|this|them|es|ihn|sie|le|la|lo|het|dit|dat)(?!\w)")
_SENTENCE = re.compile(r"[^.!?\n]*(?:[.!?]+|\n|$)")
_ID_KINDS = ("account", "card", "reference", "order", "case")
_ID_FAMILY = frozenset({"reference", "order", "case", "account", "number"})
# A value given bare: a run of digits, a code of letters and digits, or a code of capitals.
_BARE_VALUE = re.compile(
    r"(?<![\w@/.-])(?:\+?\d[\d \-]{1,22}\d|\d{3,}|(?=[A-Za-z0-9-]*\d)[A-Za-z0-9][A-Za-z0-9-]{2,}[A-Za-z0-9]|[A-Z]{5,})(?![\w@/]|[.,]\d)"
)
_LEAD = re.compile(
    r"(?i)^[\W_]*(?:(?:yes|yeah|yep|sure|ok(?:ay)?|of\s+course|certainly|it\s*['’]?s|it\s+is|that\s*['’]?s|"
    r"ja|klar|gerne?|natürlich|es\s+ist|das\s+ist|oui|c['’]est|s[ií]|claro|es|zeker|het\s+is)(?!\w)[\s,.:;!-]*)*"
)


@dataclass(frozen=True)
class Reading:
    """What a turn says: its entities (slot answers relabelled, secrets as ``secret``), and the
    starts of names that are the speaker's own although no cue says so (a reply to "your name?")."""

    entities: tuple[Entity, ...]
    own_names: frozenset[int] = frozenset()


def cue_table(configured: RequestCues | None = None) -> dict[str, dict[str, tuple[str, ...]]]:
    """The built-in cues with the configured ones merged in: a language's kind given in the settings
    replaces that list (``[]`` turns it off); new languages and kinds are added."""
    table = {lang: dict(kinds) for lang, kinds in REQUEST_CUES.items()}
    for lang, kinds in (configured or {}).items():
        mine = table.setdefault(lang, {})
        for kind, cues in kinds.items():
            mine[kind] = tuple(cues)
    return table


def requested(text: str, cues: RequestCues | None = None) -> frozenset[str]:
    """The kinds an agent's turn asks the customer for (``appliance.types.KINDS``), from the
    sentences that ask."""
    if not text:
        return frozenset()
    pattern, kinds_of = _compiled(_frozen(cues))
    sentences = [s.group() for s in _SENTENCE.finditer(text) if s.group().strip()]
    asking = [s for s in sentences if _ASKS.search(s)]
    found = {k for s in asking for m in pattern.finditer(_normalise(s)) for k in kinds_of[m.group()]}
    if not found - {"open"} and any(_POINTS_BACK.search(s) for s in asking):
        found |= {k for m in pattern.finditer(_normalise(text)) for k in kinds_of[m.group()]}
    return frozenset(found)


def mask(
    text: str,
    before: Turn | Sequence[Turn] | None = None,
    *,
    role: str = "customer",
    cues: RequestCues | None = None,
) -> str:
    """``text`` with its secrets masked. For a customer's text, ``before`` (the turn just before it,
    or the last few turns, newest last) counts too: a secret the agent just asked for is masked in a
    bare reply, and one the last four turns spoke of in a bare number of its shape. An agent's text
    is masked where a cue says so ("your one-time code is 482913")."""
    return secrets.masked(text, _secrets_of(text, before, role, cues))


def secret_values(turns: Sequence[Turn], *, cues: RequestCues | None = None) -> frozenset[str]:
    """The secrets a transcript holds as given (where masking was off), each as its text: what
    no summary may contain, with or without a cue next to it."""
    found: set[str] = set()
    for i, turn in enumerate(turns):
        found.update(
            turn.text[s.start : s.end] for s in _secrets_of(turn.text, turns[max(0, i - 6) : i], turn.role, cues)
        )
    return frozenset(found)


def _secrets_of(
    text: str, before: Turn | Sequence[Turn] | None, role: str, cues: RequestCues | None
) -> tuple[secrets.Secret, ...]:
    if role != "customer":
        return secrets.find(text)
    turns = (before,) if isinstance(before, Turn) else tuple(before or ())
    last = turns[-1] if turns else None
    kinds = requested(last.text, cues) if last is not None and last.role == "agent" else frozenset()
    recent = frozenset(k for t in turns[-4:] for k in secrets.mentioned(t.text))
    recent |= frozenset(k for t in turns[-4:] if t.role == "agent" for k in requested(t.text, cues) & secrets.KINDS)
    return secrets.find(text, kinds, recent)


def masked(turns: Sequence[Turn], *, cues: RequestCues | None = None) -> tuple[Turn, ...]:
    """A whole transcript masked, each turn with the turns before it (a transcript a client sends)."""
    out: list[Turn] = []
    for turn in turns:
        text = mask(turn.text, out[-6:], role=turn.role, cues=cues)
        out.append(turn if text == turn.text else Turn(turn.session_id, turn.index, turn.role, text, turn.created_at))
    return tuple(out)


def read(text: str, asked: str | None = None, *, customer: bool = True, cues: RequestCues | None = None) -> Reading:
    """The facts of a turn. For a customer's turn, ``asked`` (the agent's turn just before, if any)
    decides what its bare values are; a masked secret's placeholder becomes a ``secret`` entity."""
    found = list(extract(text))
    for kind, start, end in secrets.given(text):
        found = _put(found, Entity("secret", text[start:end], start, end, kind))
    if not customer:
        return Reading(tuple(sorted(found, key=lambda e: (e.start, e.end))))
    kinds = requested(asked, cues) if asked else frozenset()
    for s in secrets.find(text, kinds) if kinds & secrets.KINDS else ():
        found = _put(found, Entity("secret", text[s.start : s.end], s.start, s.end, s.kind))
    found = _slot_values(text, kinds, found)
    own: set[int] = set()
    cued = any(e.kind == "name" and names.introduces_self(text, e.start) for e in found)
    span = None
    if not cued and "name" in kinds:
        span = names.reply_name(text)
    elif not cued and (asked is None or "open" in kinds or not _ASKS.search(asked)):
        span = names.opening_name(text)
    if span is not None:
        start, end = span
        found = _put(found, Entity("name", text[start:end], start, end, names.norm(text[start:end])))
        own.add(start)
    found.sort(key=lambda e: (e.start, e.end))
    return Reading(tuple(found), frozenset(own))


def _slot_values(text: str, kinds: frozenset[str], found: list[Entity]) -> list[Entity]:
    """Values of the reply read as the kinds asked for: relabelled where the extractor saw a
    number or a date, added where it saw nothing (a short account number, a code of letters)."""
    id_kind = next((("account" if k == "card" else k) for k in _ID_KINDS if k in kinds), None)
    out = []
    for e in found:
        if e.kind == "date" and "birthdate" in kinds:
            e = Entity("birthdate", e.text, e.start, e.end, e.norm)
        elif e.kind == "number" and "phone" in kinds and 7 <= len(e.norm) <= 15 and id_kind is None:
            e = Entity("phone", e.text, e.start, e.end, e.norm)
        elif e.kind == "number" and "postcode" in kinds and id_kind is None:
            e = Entity("postcode", e.text, e.start, e.end, e.norm)
        elif e.kind in _ID_FAMILY and id_kind is not None and e.kind != id_kind:
            e = Entity(id_kind, e.text, e.start, e.end, e.norm)
        out.append(e)
    if id_kind is not None or "phone" in kinds or "postcode" in kinds:
        for m in _BARE_VALUE.finditer(text):
            raw = m.group().strip(" -")
            start = m.start() + m.group().index(raw)
            end = start + len(raw)
            if any(start < e.end and e.start < end for e in out if e.kind != "address"):
                continue
            number = digits(raw)
            if id_kind is not None and " " not in raw:
                out.append(Entity(id_kind, raw, start, end, compact(raw)))
            elif "phone" in kinds and 7 <= len(number) <= 15 and len(number) >= len(raw.replace(" ", "")) - 1:
                out.append(Entity("phone", raw, start, end, ("+" if raw.startswith("+") else "") + number))
            elif "postcode" in kinds and 3 <= len(compact(raw)) <= 8:
                out.append(Entity("postcode", raw, start, end, compact(raw)))
    if "address" in kinds and not any(e.kind == "address" for e in out):
        address = _reply_address(text)
        if address is not None:
            out.append(address)
    return out


def _reply_address(text: str) -> Entity | None:
    lead = _LEAD.match(text)
    start = lead.end() if lead else 0
    m = re.match(r"[^!?\n]{4,80}?(?=\.\s|[!?\n]|\.?$)", text[start:])
    if m is None:
        return None
    value = m.group().strip(" ,;:")
    if not (any(c.isdigit() for c in value) or sum(w[:1].isupper() for w in value.split()) >= 2):
        return None
    start = text.index(value, start)
    return Entity("address", value, start, start + len(value), spaced(value))


def _put(found: list[Entity], new: Entity) -> list[Entity]:
    """``found`` with ``new`` in place of the entities it overlaps (an address overlaps freely)."""
    return [e for e in found if e.kind == "address" or not (new.start < e.end and e.start < new.end)] + [new]


def _normalise(text: str) -> str:
    """Lower case, punctuation as spaces ("e-mail" → "e mail", "D.O.B." → "d o b"), single spaces."""
    text = re.sub(r"[^\w\s']", " ", text.casefold().replace("’", "'"))
    return re.sub(r"\s+", " ", text).strip()


def _frozen(cues: RequestCues | None) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    table = cue_table(cues)
    return tuple((lang, kind, tuple(table[lang][kind])) for lang in sorted(table) for kind in sorted(table[lang]))


@lru_cache(maxsize=8)
def _compiled(frozen: tuple[tuple[str, str, tuple[str, ...]], ...]) -> tuple[re.Pattern[str], dict[str, set[str]]]:
    kinds_of: dict[str, set[str]] = {}
    for _lang, kind, cues in frozen:
        for cue in cues:
            phrase = _normalise(cue)
            if phrase:
                kinds_of.setdefault(phrase, set()).add(kind)
    if not kinds_of:
        return re.compile(r"(?!x)x"), kinds_of
    alternatives = sorted(kinds_of, key=len, reverse=True)
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(p) for p in alternatives) + r")(?!\w)"), kinds_of
