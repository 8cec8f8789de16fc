"""The lexicon's words for facts, as :mod:`appliance.facts` reads them: how digits are said, names of
people, the labels and cues of codes, addresses and dates, and the words of times, deadlines and
commitments. Part of the lexicon's shape (:mod:`appliance.lexicon.schema`, which every language
imports them from), kept in a module of its own so that the schema stays readable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Numbers:
    """How digits are said, beyond what ``text2num`` reads (``appliance.facts.spoken``)."""

    spellings: Mapping[str, str] = field(default_factory=dict)
    """Lower-case spellings of a digit that text2num does not read, and the digit ("oh": "0")."""
    repeats: Mapping[str, int] = field(default_factory=dict)
    """Lower-case words that say the next digit more than once, and how often ("double": 2)."""


@dataclass(frozen=True)
class Names:
    """Names of people (``appliance.facts.names``); patterns are matched without case."""

    self_cues: tuple[str, ...] = ()
    """Patterns after which the speaker gives their own name ("my name is"); a cue that ends in a
    script written without spaces ("我叫") needs no space before the name."""
    self_hints: tuple[str, ...] = ()
    """Lower-case pieces of text of which every ``self_cues`` cue holds one (a cheap test first)."""
    unmarked_cues: tuple[str, ...] = ()
    """Patterns of self cues typed without their apostrophe ("im"), read only where case says
    nothing of names: they are words of other languages too (German "im Büro")."""
    your_cues: tuple[str, ...] = ()
    """Patterns after which a name is the listener's ("your name is", "Sie heißen")."""
    your_hints: tuple[str, ...] = ()
    """Lower-case pieces of text of which every ``your_cues`` cue holds one."""
    firm_cues: tuple[str, ...] = ()
    """Patterns of the ``self_cues`` that always introduce a name ("my name is", not "I'm"): after
    them a name counts in any case ("my name is mei lin chen")."""
    labels: tuple[str, ...] = ()
    """Patterns of a name's label at the start of a clause ("name is", "Name:", "Nom :"): after one
    a name counts in any case ("name is bjorn lindqvist, ...")."""
    part_labels: tuple[str, ...] = ()
    """Patterns of the labels of a part of a name ("first name", "surname", "Nachname", "prénom"),
    anywhere in a turn: the name right after one is the customer's, whoever says it; in any case
    after a verb or a colon ("surname's wiśniewska"), else capitalised ("first name Ayşe last name
    Yılmaz") or, where case says nothing, of two words."""
    kin: tuple[str, ...] = ()
    """Patterns of a possessive and a word of kin before the name of that person, a comma between
    them or not ("my son, oliver grant", "meinen Mann, Klaus-Peter Zimmermann", "mijn vrouw Fatma"):
    a name capitalised, or of two words where case says nothing."""
    holder_cues: tuple[str, ...] = ()
    """Patterns after which a name is the one something is held under, in any case ("in the name
    of", "au nom de", "a nombre de", "op naam van"): the customer's, whoever says it."""
    holder_words: tuple[str, ...] = ()
    """Patterns of the short words before the name something is held under ("under"): a name of two
    capitalised words or more that ends its clause ("I have the rental under Daniel Okafor, is that
    right?"), the customer's whoever says it."""
    reply_holders: tuple[str, ...] = ()
    """Patterns of the words before the name in a reply to a name request that does not open with it
    ("the booking is for nguyen thi lan", "c'est pour ...", "es para ..."): the name closes the reply."""
    label_hints: tuple[str, ...] = ()
    """Lower-case pieces of text of which every ``labels`` pattern holds one."""
    introductions: tuple[str, ...] = ()
    """Patterns that introduce the speaker at the start of a message or a sentence, or after a
    greeting, when the name then ends the clause ("this is Tom from billing", "Bonjour, ici ...",
    "u spreekt met ...")."""
    greeted: tuple[str, ...] = ()
    """Patterns that introduce the speaker only right after a greeting, being ordinary words
    elsewhere ("Hi, it's Priya Nair", "Goedemorgen, met Kees Mulder")."""
    openers: tuple[str, ...] = ()
    """Of the ``greeted`` patterns, those that introduce the speaker opening a message too, as a
    phone call opens ("met Kwame Mensah, ik heb een vraag"); not "it's" ("It's Broken again")."""
    sign_offs: tuple[str, ...] = ()
    """Patterns of the words that close a message before a signature ("regards", "viele Grüße")."""
    common_words: tuple[str, ...] = ()
    """Lower-case common words of the language that are no one's name (pronouns, question words,
    verbs, negations): where case cannot tell a name ("mei lin chen"), they end it or rule it out."""
    here: tuple[str, ...] = ()
    """Patterns after a name that introduce its speaker ("Tom here", "Tom speaking")."""
    here_hints: tuple[str, ...] = ()
    """Lower-case pieces of text of which every ``here`` pattern holds one."""
    greetings: tuple[str, ...] = ()
    """Patterns of greetings that may open a message before a name ("hello", "guten Tag")."""
    addressing: tuple[str, ...] = ()
    """Patterns of greetings and thanks before the name of the person spoken to ("thanks", "merci")."""
    assent: tuple[str, ...] = ()
    """Patterns of assent that may stand before the name of the person spoken to ("sure")."""
    titles: tuple[str, ...] = ()
    """Patterns of titles before a name, matched with case ("Mr", "Frau"), a full stop optional."""
    particles: tuple[str, ...] = ()
    """Lower-case particles inside names ("van", "de"), which need no capital."""
    after: tuple[str, ...] = ()
    """Patterns of words that may follow a name given without a cue ("and", "here")."""
    leads: tuple[str, ...] = ()
    """Patterns of what a reply opens with before a name ("yes", "hello")."""
    it_is: tuple[str, ...] = ()
    """Patterns before a name given in reply ("it's", "das ist"), followed by a space."""
    not_names: tuple[str, ...] = ()
    """Lower-case words that follow a name cue without being a name ("sorry" in "I'm sorry")."""
    not_names_after: tuple[str, ...] = ()
    """Lower-case short words that never continue a name ("and", "from")."""
    word_forms: tuple[str, ...] = ()
    """Patterns of whole words that are forms of verbs or adverbs ("moving", "totally"), matched
    without case: where case cannot tell a name ("I AM MOVING HOUSE"), no name starts with one."""
    sentence_starts: tuple[str, ...] = ()
    """Capitalised words that start sentences and are no one's name ("Please", "What")."""
    not_bare: tuple[str, ...] = ()
    """Words that are no one's name where a name is expected without a cue: replies, words of time,
    and the words that make a run of capitals a place, a firm or a product ("hotel", "Straße")."""


@dataclass(frozen=True)
class Entities:
    """Labels and words of the fact extractor (``appliance.facts.entities``, ``amounts``, ``text``),
    matched without case; a field says whether it holds patterns or plain words and phrases
    (:func:`appliance.facts.text.phrases`: words apart by spaces, an apostrophe of either kind)."""

    labels: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Patterns by identifier kind (``reference``, ``order``, ``case``, ``ticket``, ``account``,
    ``card``, ``customer_id``, ``member_number``) of the words that label a code ("booking",
    "Bestell"); a compound's "nummer" is added by the extractor."""
    username_labels: tuple[str, ...] = ()
    """Patterns of the words that label a username ("username", "Benutzername")."""
    level_labels: tuple[str, ...] = ()
    """Patterns of the words that label a membership level ("membership level", "statut")."""
    levels: tuple[str, ...] = ()
    """Patterns of the words of membership levels ("gold", "platinum"): "a gold member" states one."""
    level_nouns: tuple[str, ...] = ()
    """Patterns of the words a level stands next to in this language, before or after it, joined by
    a space or a hyphen ("premium tier", "Platin-Mitglied", "socio oro", "Gold-abonnement")."""
    tails: tuple[str, ...] = ()
    """Plain phrases before an account's or a card's last digits, with no label ("ending in",
    "last four digits are")."""
    units: tuple[str, ...] = ()
    """Plain units after a number that make it a quantity, not a code ("kg", "GB", "mph", "pm")."""
    card_words: tuple[str, ...] = ()
    """Patterns of the words for a payment card ("card", "visa", "Karte")."""
    card_tails: tuple[str, ...] = ()
    """Patterns between a card word and its last digits ("ending in", "mit der Endung")."""
    card_last: tuple[str, ...] = ()
    """Patterns that name a card's last digits before them ("last four digits of my card are")."""
    card_ends_before: tuple[str, ...] = ()
    """Patterns before a card's last digits where the verb of ending follows them ("die auf 1358
    endet": "auf")."""
    card_ends: tuple[str, ...] = ()
    """Patterns of the verb of ending after a card's last digits ("endet", "eindigt")."""
    counts: tuple[str, ...] = ()
    """Patterns of the words that announce several values of one kind before its label ("two
    accounts", "zwei Kundennummern", "deux comptes"): the plain numbers that follow in the
    sentence are of that kind."""
    compounds: tuple[str, ...] = ()
    """Patterns that a label may be joined to in one word ("Kunden" + "nummer")."""
    number_words: tuple[str, ...] = ()
    """Patterns of the words for "number" after a label ("number", "no", "nr")."""
    label_verbs: tuple[str, ...] = ()
    """Patterns between a label and its code ("is", "lautet")."""
    value_first: tuple[str, ...] = ()
    """Patterns between a value and its label after it ("is my", "ist mein", "c'est mon", "es mi",
    "is mijn"): "skibunny_zoe is my username", "TX-0093316 is my client number"."""
    articles: tuple[str, ...] = ()
    """Plain words for "the" ("the", "le", "het"): before a number word that refers back to a label a
    few words before it ("a ticket for you, the number is REM-30417")."""
    determiners: tuple[str, ...] = ()
    """Lower-case words that open a noun phrase (articles, possessives, demonstratives: "a", "my",
    "ein", "mon", "su", "mijn"): the words between one and a code's label say what the code is of
    ("my support case 88213" is a support case; ``label`` in the ledger)."""
    qualifiers: tuple[str, ...] = ()
    """Patterns of the words that join to a label what it is of, a word or three before its code
    ("la cuenta de la luz es 500112233", "la cuenta del gas 500112244", "the account for the flat is ...")."""
    months: tuple[tuple[str, ...], ...] = ()
    """Lower-case spellings of each month, January first (short forms included: "jan")."""
    ambiguous_months: tuple[str, ...] = ()
    """Spellings of months that are ordinary words too ("may", "mar"): dates only with a day and a
    year, an ordinal or a capital."""
    weekdays: tuple[tuple[str, ...], ...] = ()
    """Lower-case spellings of each weekday, Monday first."""
    day_of: tuple[str, ...] = ()
    """Patterns between a day and its month ("the 3rd of March": "of")."""
    phone_cues: tuple[str, ...] = ()
    """Plain words and phrases shortly before or after a phone number ("phone", "Telefon")."""
    number_nouns: tuple[str, ...] = ()
    """Plain words of the ``phone_cues`` that mean "number": after a noun that is no common word they
    name no phone ("model number 55-887-1234", "numéro de série")."""
    birth_cues: tuple[str, ...] = ()
    """Plain words and phrases shortly before a date of birth ("date of birth", "geboren")."""
    address_cues: tuple[str, ...] = ()
    """Plain words and phrases that introduce an address ("my address", "meine Anschrift")."""
    address_verbs: tuple[str, ...] = ()
    """Plain words and phrases between ``address_cues`` and the address ("is", "lautet")."""
    address_joins: tuple[str, ...] = ()
    """Plain words and phrases that join another clause to an address ("and", "aber"): it ends before them."""
    phone_words: tuple[str, ...] = ()
    """Plain words and phrases that name a phone ("phone", "Telefon"): an address ends before them."""
    currencies: Mapping[str, str] = field(default_factory=dict)
    """Lower-case words for money in a currency, with its ISO 4217 code ("pounds": ``GBP``)."""
    credit: tuple[str, ...] = ()
    """Plain words and phrases after a number that say it is money in an account ("in credit", "Guthaben")."""
    balance: tuple[str, ...] = ()
    """Plain words and phrases before a number that say it is money in an account ("balance", "Kontostand")."""
    balance_verbs: tuple[str, ...] = ()
    """Plain words and phrases between ``balance`` and its number ("is", "beträgt")."""
    percent_words: tuple[str, ...] = ()
    """Plain words and phrases after a number that make it a percentage, as "%" does ("percent",
    "Prozent", "pour cent")."""


@dataclass(frozen=True)
class Times:
    """Plain lower-case words and phrases of dates, clock times and promises of a deadline
    (``appliance.facts.entities``); none of them is a pattern."""

    ordinals: tuple[str, ...] = ()
    """Endings of an ordinal day after its digits ("st", "nd"; "er"; "."; "º")."""
    day_articles: tuple[str, ...] = ()
    """Articles that are part of a date before its day ("the 3rd of March")."""
    day_leads: tuple[str, ...] = ()
    """Words before a day of the month said alone ("on the 11th", "until the 25th")."""
    not_days_after: tuple[str, ...] = ()
    """Words after an ordinal that make it no day ("the 2nd floor", "5th and Main")."""
    this_month: tuple[str, ...] = ()
    """Phrases after a day said alone that say which month it is of ("of this month")."""
    day_parts: Mapping[str, str] = field(default_factory=dict)
    """Phrases after a clock time and the half of the day they say, ``am`` or ``pm`` ("in the
    evening": ``pm``), or ``24h`` for a word of a 24-hour clock ("Uhr")."""
    oclock: tuple[str, ...] = ()
    """Phrases after an hour that make it a clock time ("o'clock")."""
    promisers: tuple[str, ...] = ()
    """Words that promise before a verb of the future ("we", "someone"), or open the noun that does
    with a word after them (``promiser_determiners``: "our team", "the courier")."""
    promiser_determiners: tuple[str, ...] = ()
    """Words before a noun that may promise ("our", "the")."""
    promise_verbs: tuple[str, ...] = ()
    """Verbs of a promise after its subject ("'ll", "will", "are going to")."""
    promised: tuple[str, ...] = ()
    """Nouns of what is promised before its deadline ("refund", "call back"); a plural in "s" counts."""
    within: tuple[str, ...] = ()
    """Words before a span of time that is a deadline ("within", "in")."""
    within_next: tuple[str, ...] = ()
    """Phrases between ``within`` and the span ("the next")."""
    counts_said: tuple[str, ...] = ()
    """Words and phrases of a number of units ("two", "a few", "a couple of")."""
    ranges: tuple[str, ...] = ()
    """Words between the two numbers of a range ("to", "or": "3 to 5 days")."""
    unit_kinds: tuple[str, ...] = ()
    """Words before a unit of time that say which days count ("business", "working")."""
    units: tuple[str, ...] = ()
    """Units of time of a deadline, singular and plural ("day", "days", "hrs")."""
    by: tuple[str, ...] = ()
    """Words before a point in time that is a deadline ("by", "no later than")."""
    deadlines: tuple[str, ...] = ()
    """Points in time after ``by`` ("end of the day", "tomorrow", "close of business")."""
    next: tuple[str, ...] = ()
    """Words before a weekday that say which one ("next")."""
    timetable: tuple[str, ...] = ()
    """Verbs of a timetable, not of a promise ("arrive", "departs"): "will arrive by 12:07" is none."""
