"""English: the labels and cues of facts (:class:`~appliance.lexicon.schema.Entities`), a large group
of the English lexicon, kept in a module of its own so that :mod:`appliance.lexicon.en` stays
readable.
"""

from appliance.lexicon.schema import Entities

# fmt: off
ENTITIES = Entities(
    labels={
        "reference": (r"ref(?:erence)?", "booking", "confirmation", "reservation"),
        "order": ("order", "invoice", "tracking", "parcel", "shipment", "receipt"),
        "case": ("case", "claim", "complaint", "request"),
        "ticket": ("ticket", "incident"),
        "account": ("account", "acct", "policy", "iban", "contract"),
        "card": ("card",),
        "customer_id": ("customer", "client"),
        "member_number": (r"member(?:ship)?", "loyalty", "rewards"),
    },
    username_labels=(r"user\s?name", r"user\s?id", r"login(?:\s+name)?", "handle", r"screen\s?name"),
    level_labels=(r"member(?:ship)?\s+(?:level|tier|status)", r"loyalty\s+(?:level|tier|status)", "tier"),
    levels=("bronze", "silver", "gold", "platinum", "diamond", "premium", "elite", "vip"),
    level_nouns=("member", "membership", "tier", "level", "status", "cardholder", "customer"),
    tails=(
        "end", "ends", "ending", "end in", "ends in", "ending in", "end with", "ends with", "ending with",
        "last four", "last four are", "last four is", "last four digits", "last four digits are",
        "last four digits is", "last 4", "last 4 are", "last 4 is", "last 4 digits", "last 4 digits are",
        "last 4 digits is", "last two", "last two are", "last two is", "last two digits", "last two digits are",
        "last two digits is", "last 2", "last 2 are", "last 2 is", "last 2 digits", "last 2 digits are",
        "last 2 digits is", "last three", "last three are", "last three is", "last three digits",
        "last three digits are", "last three digits is", "last 3", "last 3 are", "last 3 is", "last 3 digits",
        "last 3 digits are", "last 3 digits is",
    ),
    units=tuple(
        """
        st nd rd th am pm mg ml kg km cm mm gb mb kb tb ghz mhz kwh mph kph ft lbs oz hr hrs min mins sec secs k m h
        x d p s g l v w
        """.split()
    ),
    card_words=("card", "visa", r"master\s?card", "amex", "maestro", "debit", "credit"),
    card_tails=(
        r"ending(?:\s+(?:in|with))?", r"(?:that|which)\s+ends(?:\s+(?:in|with))?", r"ends\s+(?:in|with)",
        r"(?:the\s+)?last\s+(?:four|4)(?:\s+digits)?(?:\s+(?:are|is))?",
    ),
    card_last=(
        r"last\s+(?:four|4)\s+(?:digits\s+)?(?:of|on)\s+(?:my|the|your)\s+(?:\w+\s+)?"
        r"(?:card|visa|master\s?card|amex)\s*(?:are|is|:)",
    ),
    counts=("two", "three", "four", "both", "several", "multiple"),
    number_words=("number", "num", "no", "id", "code", "ref"),
    label_verbs=("is", "was", "of", "reads", r"it\s*['’]?\s*s"),
    value_first=(r"(?:is|was)\s+(?:my|our)",),
    articles=("the",),
    determiners=tuple("a an the my our your his her their its this that these those ur yr another".split()),
    qualifiers=("for", "of", "on", "in", "at", "with"),
    months=(
        ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
        ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
        ("november", "nov"), ("december", "dec"),
    ),
    ambiguous_months=("may", "mar", "jun", "sep", "dec", "jan"),
    weekdays=(("monday",), ("tuesday",), ("wednesday",), ("thursday",), ("friday",), ("saturday",), ("sunday",)),
    day_of=("of",),
    phone_cues=(
        "phone", "tel", "telephone", "call", "ring", "mobile", "cell", "fax", "contact", "number", "whatsapp",
        "sms", "text", "reach", "reached",
    ),
    number_nouns=("number",),
    birth_cues=("date of birth", "birth date", "birthdate", "birthday", "d.o.b.", "d.o.b", "dob", "born", "born in", "born on"),
    address_cues=(
        "my address", "my billing address", "my delivery address", "my home address", "my postal address",
        "my shipping address", "my street address", "your address", "your billing address",
        "your delivery address", "your home address", "your postal address", "your shipping address",
        "your street address",
    ),
    address_verbs=("is", "was"),
    address_joins=("and", "but"),
    phone_words=("phone", "tel", "telephone"),
    currencies={
        "dollars": "USD", "dollar": "USD", "bucks": "USD", "euros": "EUR", "euro": "EUR", "pounds": "GBP",
        "pound": "GBP", "quid": "GBP", "yen": "JPY", "francs": "CHF", "rupees": "INR", "yuan": "CNY",
        "kronor": "SEK", "kroner": "NOK", "pesos": "MXN", "reais": "BRL",
    },
    credit=("in credit", "credit", "credits"),
    balance=("balance", "total", "amount due", "outstanding"),
    balance_verbs=("is", "was", "of"),
    percent_words=("per cent", "percent", "percentage point", "percentage points", "pct"),
)
# fmt: on
