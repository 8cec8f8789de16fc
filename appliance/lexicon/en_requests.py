"""English: how an agent asks a customer for something (:class:`~appliance.lexicon.schema.Requests`),
a large group of the English lexicon, kept in a module of its own so that
:mod:`appliance.lexicon.en` stays readable.
"""

from appliance.lexicon.schema import Requests

# fmt: off
REQUESTS = Requests(
    cues={
        "name": (
            "your name", "your full name", "your first name", "your last name", "your surname", "your family name",
            "name on the account", "name on the card", "who am i speaking with", "who am i speaking to",
            "who is calling", "whom am i speaking", "who's calling", "what name", "which name", "name on the",
            "name for the", "a name for", "may i ask who", "name please", "holder's name", "policyholder's name",
            "patient's name", "customer's name", "member's name", "the account holder", "the policyholder",
            "the policy holder", "the cardholder", "and the name", "whose name", "first and last name", "full name",
            "first name", "last name", "surname", "and you are", "you are mr", "you are mrs", "you are ms",
        ),
        "account": (
            "account number", "your account", "account no", "policy number", "iban", "account id", "which account",
            "what account", "contract number",
        ),
        "card": (
            "card number", "long number on the card", "number on your card", "last four digits", "last 4 digits",
            "card ending", "which card", "what card", "which of your cards",
        ),
        "customer_id": ("customer number", "customer id", "customer no", "client number", "client id"),
        "member_number": (
            "membership number", "member number", "member id", "membership id", "loyalty number", "rewards number",
            "library card number", "loyalty card number", "membership card number",
        ),
        "member_level": (
            "membership level", "member level", "membership tier", "member tier", "membership status",
            "loyalty tier", "loyalty level", "loyalty status", "which status", "what status", "which tier",
            "what tier", "your tier",
        ),
        "username": ("username", "user name", "user id", "login", "login name", "handle", "screen name"),
        "ticket": (
            "ticket number", "ticket id", "support ticket", "ticket reference", "incident number", "which ticket",
        ),
        "reference": (
            "booking reference", "booking number", "reference number", "reference code", "confirmation number",
            "confirmation code", "reservation number", "booking code", "booking id", "your reference",
        ),
        "order": ("order number", "order id", "invoice number", "tracking number", "receipt number"),
        "case": ("case number", "claim number", "complaint number"),
        "birthdate": (
            "date of birth", "birth date", "birthdate", "your birthday", "dob", "d o b", "when were you born",
        ),
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
        "cvv": (
            "security code", "cvv", "cvc", "three digits on the back", "3 digits on the back", "card verification",
        ),
        "password": ("password", "passcode"),
        "otp": (
            "one time code", "one time password", "verification code", "code we sent", "code i sent",
            "code we texted", "sms code", "otp",
        ),
        "open": (
            "how can i help", "how may i help", "how can i assist", "what can i do for you", "how can we help",
        ),
    },
    asking=(
        "please", "pls", "could", "can", "may", "would", "need", "tell", "give", "provide", "confirm", "enter",
        "type", "share",
    ),
    pointing=("one", "it", "that", "this", "them"),
    leads=(
        "yes", "yeah", "yep", "sure", r"ok(?:ay)?", r"of\s+course", "certainly", r"it\s*['’]?s", r"it\s+is",
        r"that\s*['’]?s",
    ),
    plurals=("s", "es"),
    nouns={
        "name": ("name", "surname"), "account": ("account",), "card": ("card",),
        "member_number": ("member", "membership"), "member_level": ("member", "membership"),
        "ticket": ("ticket", "incident"), "reference": ("booking", "reservation"), "order": ("order",),
    },
    listeners=("your", "ur", "yr", "ya", "yer"),
    who=(
        r"\bwho(?:\s*'s|\s+is|\s+was)\s+(?:(?:the|this|that|it|your)\s+)?(?:\w+\s+){0,2}?(?:under|for)\s*\?",
        r"\bwho(?:\s*'s|\s+is)\s+(?:this|calling|speaking)\b", r"\bwhom?\s+(?:am|do)\s+i\s+(?:speaking|talking|have)\b",
        r"(?:^|\band\s+|,\s*)you\s+are\s*(?:\.\.\.|…)?\s*\?",
    ),
)
# fmt: on
