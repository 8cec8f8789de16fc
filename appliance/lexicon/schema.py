"""The shape of one language's lexicon: what each part of the appliance reads from it.

Two kinds of entries. *Phrases* are plain text, matched as whole words without case (request cues,
stage cues, recall cues). *Patterns* are regular expressions, written for text in lower case unless
a field says otherwise, and joined across languages with ``|`` in the order of
:data:`appliance.lexicon.CODES`; a pattern must not hold capturing groups of its own. Every field
defaults to empty, so a language that only has, say, name cues fills only those.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

# The words of facts are a part of the shape of their own; every language imports them from here.
from appliance.lexicon.fact_words import Entities as Entities
from appliance.lexicon.fact_words import Names as Names
from appliance.lexicon.fact_words import Numbers as Numbers
from appliance.lexicon.fact_words import Times as Times

# The kinds of secret each language names (the keys of ``Secrets.cues``), then the national
# identification numbers, each of one country's shape (the keys of ``Secrets.national_ids``): what
# ``privacy.mask_kinds`` chooses from, beside ``card`` (a full card number, found by its shape).
SECRET_KINDS: tuple[str, ...] = ("pin", "cvv", "password", "otp")
NATIONAL_ID_KINDS: tuple[str, ...] = ("ssn", "nino", "steuer_id", "dni", "nir", "bsn")
MASK_KINDS: tuple[str, ...] = (*SECRET_KINDS, "card", *NATIONAL_ID_KINDS)


@dataclass(frozen=True)
class Requests:
    """How an agent asks a customer for something (``appliance.facts.slots``)."""

    cues: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Phrases by request kind (``appliance.types.KINDS``): "your account number" asks for ``account``."""
    asking: tuple[str, ...] = ()
    """Patterns of the words that make a sentence a request ("please", "could"), as whole words."""
    pointing: tuple[str, ...] = ()
    """Patterns of the words by which a request points back at a kind named before ("the correct one")."""
    leads: tuple[str, ...] = ()
    """Patterns of what a bare reply opens with before its value ("yes", "it's"), matched without case."""
    plurals: tuple[str, ...] = ()
    """Plain endings of a plural noun ("s", "es"): a cue counts with its first or its last word in
    the plural ("your ticket numbers", "sus números de ticket", "Ihre Kundennummern")."""
    nouns: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Patterns by request kind of the nouns that name it ("name", "Namen", "nom", "cuenta", "lid"),
    matched as whole words in the form of :func:`~appliance.lexicon.text.phrase_form`: in a sentence
    that asks, the noun alone is the request ("can i grab ur name", "Ihr Name?", "op wiens naam?").
    A name's noun after another's ("your pet's name") or another noun ("company name"), or before a
    word of what it is of ("the name of the hotel"), asks for no one's name."""
    listeners: tuple[str, ...] = ()
    """Lower-case words of the listener's that may stand before a noun of ``nouns`` ("your", "ur",
    "Ihr", "votre", "su", "uw"), beside the common words of every language."""
    of_words: tuple[str, ...] = ()
    """Lower-case words after a name's noun that make it the name of something else, beside the
    qualifiers of labels (``entities.qualifiers``): the genitive articles of "der Name des Hotels"."""
    who: tuple[str, ...] = ()
    """Patterns of questions for the customer's name that name no noun of it ("who's the booking
    under?", "vous êtes ?", "¿con quién hablo?", "voor wie is de reservering?"), matched in lower
    case with a straight apostrophe in a sentence that asks."""


@dataclass(frozen=True)
class ReadBack:
    """How a customer asks to hear a fact again (``appliance.facts.readback``); patterns are written
    lower case, without accents and with a straight apostrophe (the text is folded so first)."""

    topics: Mapping[str, str] = field(default_factory=dict)
    """A pattern per read-back topic (``appliance.types.READBACK_TOPICS``): "date of birth" is ``birthdate``."""
    request: tuple[str, ...] = ()
    """Patterns that ask for something said before, enough on their own ("read back", "remind me")."""
    again: tuple[str, ...] = ()
    """Patterns that ask again ("again", "noch einmal"): a request only with an ``asking`` word."""
    asking: tuple[str, ...] = ()
    """Patterns of question words and verbs of telling ("what", "tell") that make ``again`` a request."""
    first: tuple[str, ...] = ()
    """Patterns that ask for the first value given rather than the current one ("at the start")."""
    earlier: tuple[str, ...] = ()
    """Patterns that point at values given earlier ("earlier", "vorhin"): the older current values
    are read back before the newer ones."""
    labels: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """Per topic, the phrase's subject for one value and for several ("Your name", "The names I have")."""
    verbs: tuple[str, str] = ("", "")
    """The verb of the phrase for one value and for several ("is", "are")."""
    conjunction: str = ""
    """The word that joins the last two values of a list ("and")."""


@dataclass(frozen=True)
class StageCues:
    """The conversation's stage (``appliance.stage``): phrases, matched as whole words without case."""

    late: tuple[str, ...] = ()
    """Resolution cues that make a customer's turn ``late`` ("that's all", "thank you")."""
    open: tuple[str, ...] = ()
    """Cues of a new request that keep a turn with a resolution cue ``mid`` ("also", "I'd like")."""
    person: tuple[str, ...] = ()
    """Phrases that ask for a human ("a real person", "einen Mitarbeiter"): the conversation then
    needs a person (``appliance.turn.floor``)."""


@dataclass(frozen=True)
class Secrets:
    """PINs, card security codes, passwords and one-time codes (``appliance.facts.secrets``);
    patterns are matched without case unless they say otherwise (``(?-i:...)``)."""

    cues: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Patterns by secret kind (``pin``, ``cvv``, ``password``, ``otp``): "security code" names a ``cvv``."""
    hints: tuple[str, ...] = ()
    """Lower-case pieces of text of which every cue holds one: a cheap test before the cue patterns."""
    other_facts: tuple[str, ...] = ()
    """Words that name a fact other than a secret ("account", "Konto"): between a cue and a number
    they say the number is not the secret's."""
    joins: tuple[str, ...] = ()
    """Patterns of the words that join two values given in one breath ("or", "and")."""
    hedges: tuple[str, ...] = ()
    """Patterns of the words of doubt before a second value ("maybe")."""
    quantities: tuple[str, ...] = ()
    """Patterns of the units after a number that make it a quantity, not a secret ("days", "pm")."""
    password_verbs: tuple[str, ...] = ()
    """Patterns between "password" and the password itself ("is", "lautet")."""
    not_passwords: tuple[str, ...] = ()
    """Words after "my password is" that say something about it instead of being it ("wrong")."""
    password_replies: tuple[str, ...] = ()
    """Patterns of what a reply to "what is your password?" opens with before it ("yes", "it's")."""
    cards: tuple[str, ...] = ()
    """Patterns of the words before a payment card's number ("card", "Kreditkarte")."""
    not_cards: tuple[str, ...] = ()
    """Patterns of the words before a long number that is not a card's ("account", "order")."""
    national_ids: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Patterns by national identification number (:data:`NATIONAL_ID_KINDS`) of the words that name
    one ("social security number", "Steuer-ID", "BSN"): a number shortly after one is read by that
    kind's shape more widely (without its dashes), its check digits still holding."""
    id_hints: tuple[str, ...] = ()
    """Lower-case pieces of text of which every ``national_ids`` pattern holds one."""
    asks: tuple[str, ...] = ()
    """Patterns of asking someone for something ("could you give me", "wie lautet", "j'ai besoin
    de"), matched in :func:`~appliance.lexicon.text.phrase_form` text keeping ``?``: in an agent's
    sentence that names a secret, the agent asks for it."""
    clauses: tuple[str, ...] = ()
    """Lower-case words that, between a way of asking and a secret, turn the question to something
    else ("could you tell me if your PIN was blocked", "which card", "the reason", "ob", "si")."""
    pointers: tuple[str, ...] = ()
    """Patterns of the words that point back at a secret the sentence before named ("the code",
    "den Code"): "We've just sent you a one-time code. Can you tell me the code?" asks for it."""
    warnings: tuple[str, ...] = ()
    """Patterns that make a sentence naming a secret a warning or a piece of information rather than
    a request, whatever it asks ("never", "niemandem", "at the terminal"), in the form of ``asks``."""


@dataclass(frozen=True)
class Ledger:
    """How the ledger (``appliance.facts.ledger``) tells a correction from a new value, a label from
    a subject; patterns are matched without case."""

    corrections: tuple[str, ...] = ()
    """Patterns that make the value after them correct an earlier one ("sorry, it's", "I meant")."""
    denials: tuple[str, ...] = ()
    """Patterns that open a reply denying what the agent just read back ("no", "nein")."""
    additions: tuple[str, ...] = ()
    """Patterns that make a value one more rather than a correction or a replacement ("another",
    "also"; not "new": "my new number is ..." replaces the old one)."""
    value_labels: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Patterns by kind (``account``, ``phone``, ``email``, ``address``, ``card``, ``username``,
    ``customer_id``, ``name``) of the words that tell several values of one kind apart ("savings",
    "mobile", "Girokonto"; "surname" for a part of a name given on its own)."""
    subjects: tuple[str, ...] = ()
    """Patterns of the words of places and services that a value may be about ("hotel", "taxi");
    in a compound too ("Taxizentrale")."""
    not_subjects: tuple[str, ...] = ()
    """Lower-case words that open or make a capitalised run without naming a subject ("the", "Sie")."""


@dataclass(frozen=True)
class KnowledgeCues:
    """The fetch check of the knowledge base (``appliance.knowledge.fetch``): patterns matched without
    case as whole words, on text folded like the read-back's (no accents, straight apostrophes)."""

    greetings: tuple[str, ...] = ()
    """Patterns of greetings and small talk that need no document ("hello", "how are you")."""
    thanks: tuple[str, ...] = ()
    """Patterns of thanks and goodbyes that need no document ("thank you", "bye")."""
    fillers: tuple[str, ...] = ()
    """Patterns of the words a message may open with before its point ("ok", "um", "great"): left
    out of the question that is matched against the documents."""
    hesitations: tuple[str, ...] = ()
    """Patterns of hesitations, left out of the question wherever they stand ("um", "uh", "hmm"):
    speech recognition writes them mid-sentence."""
    questions: tuple[str, ...] = ()
    """Patterns that make a message a question ("do you", "is there", "what", "whether")."""
    open_questions: tuple[str, ...] = ()
    """Patterns of the words that open a question asking for a thing rather than a yes or no ("what",
    "when", "how"): a yes/no form after one ("what is the ...") is not a yes/no question."""
    polar: tuple[str, ...] = ()
    """Patterns of a yes/no question about a fact ("do they", "is there", "whether"): the form of a
    question documents answer. Not "can you" or "can I", the usual ways of asking for something to be
    done or given."""
    actions: tuple[str, ...] = ()
    """Patterns of a request to do something rather than to be told something ("book", "find me"), and
    of a search for another place than the one being discussed ("another", "in the same area": a
    second place near the first, found in a catalogue, not in the documents). Not an existential
    question about a place's facilities ("is there a place to park my bike?")."""
    procedures: tuple[str, ...] = ()
    """Patterns that ask how something is done ("how do I", "where can I"): an action's word after one
    is asked about, not requested ("How do I book one?")."""
    repeats: tuple[str, ...] = ()
    """Patterns of a request to hear again what the agent just said ("can you repeat", "say that
    again"): the conversation has the answer."""
    numbers: tuple[str, ...] = ()
    """The lower-case words for 0 to 19, in order: a number spoken in a transcript ("nineteen zero
    six") meets the digits of a document's title ("Nineteen 06 Mission")."""
    tens: tuple[str, ...] = ()
    """The lower-case words for 20, 30 ... 90, in order ("thirty nine" is 39)."""
    ordinals: tuple[str, ...] = ()
    """The lower-case words for 1st to 19th, in order ("sixteenth" meets "16th")."""


@dataclass(frozen=True)
class Replies:
    """How an answer says yes or no: how it takes a yes back (``appliance.facts.opener``), and which of
    the two it says (``appliance.facts.stance``). Patterns matched without case, as whole words."""

    yes: tuple[str, ...] = ()
    """Patterns of the yes an answer opens with ("yes", "yeah", "ja", "oui", "sí")."""
    no: tuple[str, ...] = ()
    """Patterns of the no an answer opens with ("no", "unfortunately", "nein", "non", "leider")."""
    absences: tuple[str, ...] = ()
    """Patterns of a statement that something is not there, beside a negated verb ("there is no",
    "never", "none"): "There is no WiFi at the centre." says no."""
    negations: tuple[str, ...] = ()
    """Patterns of a statement negating its own verb ("are not", "doesn't", "ne sont pas", "nicht",
    "no aceptan"): after a yes, the statement says no."""
    contrasts: tuple[str, ...] = ()
    """Patterns of the words that open a contrast after a yes ("but", "except", "aber", "mais"): "Yes,
    but not on Sundays" is a yes with a limit, not a no."""


@dataclass(frozen=True)
class Lexicon:
    """The words of one language that the appliance matches, by the part that reads them."""

    code: str
    """The language's ISO 639-1 code; the module's name in ``appliance/lexicon/``."""
    regions: tuple[str, ...] = ()
    """ISO 3166 codes of the regions where the language is most spoken, first the one a bare local
    phone number of a customer writing it most likely belongs to ("GB", "US" for English)."""
    compounding: bool = False
    """Whether the language joins nouns into one word: a one-word request cue of six letters or
    more counts at the end of a longer word ("Vertragskontonummer" asks for a "kontonummer"), and
    a level at the start of one ("Goldkunde")."""
    requests: Requests = field(default_factory=Requests)
    readback: ReadBack = field(default_factory=ReadBack)
    stage: StageCues = field(default_factory=StageCues)
    recall: tuple[str, ...] = ()
    """Phrases that make a message point back at something said before ("again", "vorhin"), so
    that recall runs: matched without case as whole words, in scripts without spaces as text."""
    secrets: Secrets = field(default_factory=Secrets)
    times: Times = field(default_factory=Times)
    numbers: Numbers = field(default_factory=Numbers)
    names: Names = field(default_factory=Names)
    entities: Entities = field(default_factory=Entities)
    ledger: Ledger = field(default_factory=Ledger)
    knowledge: KnowledgeCues = field(default_factory=KnowledgeCues)
    replies: Replies = field(default_factory=Replies)
    language_names: Mapping[str, str] = field(default_factory=dict)
    """Names of languages in this language, by ISO 639-1 code (the summarizer's prompt, in English,
    names the conversation's language with the English ones)."""
