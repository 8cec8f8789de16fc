"""English."""

from appliance.lexicon.en_entities import ENTITIES
from appliance.lexicon.en_names import NAMES
from appliance.lexicon.en_requests import REQUESTS
from appliance.lexicon.schema import (
    KnowledgeCues,
    Ledger,
    Lexicon,
    Numbers,
    ReadBack,
    Replies,
    Secrets,
    StageCues,
    Times,
)

# fmt: off
LEXICON = Lexicon(
    code="en",
    regions=("GB", "US"),
    requests=REQUESTS,
    readback=ReadBack(
        topics={
            "birthdate": r"date\s+of\s+birth|birth\s*date|birthday|dob|d\.o\.b\.?",
            "email": r"e-?mail(?:\s+address)?",
            "phone": r"(?:tele)?phone(?:\s+number)?|(?:mobile|cell)(?:\s+number)?|contact\s+number|number\s+to\s+call",
            "postcode": r"post\s*code|postal\s+code|zip(?:\s*code)?",
            "address": r"(?:home\s+|street\s+|postal\s+)?address",
            "customer_id": r"customer\s+(?:id|number|no\.?)|client\s+(?:id|number)",
            "member_number": r"member(?:ship)?\s+(?:number|id|no\.?)|loyalty\s+number",
            "member_level": r"member(?:ship)?\s+(?:level|tier|status)|loyalty\s+(?:level|tier)|tier",
            "username": r"user\s*name|user\s*id|login(?:\s+name)?|handle",
            "ticket": r"(?:ticket|incident)(?:\s+(?:number|no\.?|id|reference))?",
            "card": r"card(?:\s+(?:number|ending))?|last\s+(?:four|4)(?:\s+digits)?",
            "account": r"account(?:\s+(?:number|no\.?|#))?|acct|iban",
            "train": r"train(?:\s+(?:id|number|no\.?))?",
            "order": r"order(?:\s+(?:number|no\.?|id))?|tracking\s+number|invoice\s+number",
            "case": r"(?:case|claim|complaint)(?:\s+(?:number|no\.?|id))?",
            "reference": (
                r"(?:booking|reservation|confirmation)\s+(?:number|reference|code|id)|reference(?:\s+(?:number|code))?|"
                r"ref(?:\s+(?:number|no\.?))?|confirmation"
            ),
            "amount": r"how\s+much|amount|money|sum|price|cost|fee|total",
            "name": r"(?:full\s+|first\s+|last\s+|sur)?name",
            "date": r"date|(?:which|what)\s+day",
            "time": r"what\s+time|time",
        },
        request=(
            r"(?:read|say|give|repeat|spell|play)\b[^.?!]{0,25}\bback", r"remind\s+me", r"remember\s+my",
            r"(?:did|do)\s+i\s+(?:give|tell|say|provide|mention|use|share)",
            r"i\s+(?:gave|told|said|provided|mentioned|used|shared)(?:\s+you)?",
            r"you\s+(?:gave|told|sent|quoted|read|had)\s+me", r"you\s+have\s+(?:for|on\s+file\s+for)\s+me",
            r"what(?:'s|\s+is|\s+was|\s+were)\s+(?:my|our)",
            r"(?:which|what)\b[^.?!]{0,40}\b(?:was|were)\s+(?:that|it|those)",
            r"do\s+you\s+(?:have|know|remember)\s+my", r"(?:confirm|repeat|read)\s+(?:my|our|the|that|it)",
        ),
        again=("again", r"once\s+more", r"one\s+more\s+time"),
        asking=("what", "which", "how", "tell", "say", "give", "read", "repeat", "remind", "confirm"),
        first=(
            r"at\s+the\s+(?:start|beginning)", r"in\s+the\s+beginning", r"first(?!\s+name)", "originally", "initially",
            r"to\s+begin\s+with",
        ),
        earlier=("earlier", "before", "previously", r"a\s+while\s+ago", r"back\s+then"),
        labels={
            "birthdate": ("Your date of birth", "The dates of birth I have"),
            "email": ("Your email address", "The email addresses I have"),
            "phone": ("Your phone number", "The phone numbers I have"),
            "postcode": ("Your postcode", "The postcodes I have"),
            "address": ("Your address", "The addresses I have"),
            "customer_id": ("Your customer ID", "The customer IDs I have"),
            "member_number": ("Your membership number", "The membership numbers I have"),
            "member_level": ("Your membership level", "The membership levels I have"),
            "username": ("Your username", "The usernames I have"),
            "ticket": ("Your ticket number", "The ticket numbers I have"),
            "card": ("Your card ends in {}.", "Your cards end in {}."),
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
        verbs=("is", "are"),
        conjunction="and",
    ),
    stage=StageCues(
        late=(
            "anything else", "nothing else", "nothing more", "that's all", "that is all", "that's it", "that is it",
            "that will be all", "all i need", "all i needed", "all the help i need", "what i needed", "thank you",
            "thanks", "cheers", "appreciate", "resolved", "sorted", "all set", "no further", "we're done", "i'm done",
            "not today", "bye", "goodbye", "good bye", "have a nice day", "have a good day",
        ),
        open=(
            "?", "also", "another", "i need", "i'll need", "i will need", "i just need", "i'd like", "i would like",
            "i want", "i'm looking", "i am looking", "can you", "could you", "can i", "could i", "please find",
            "please book", "please send", "one more", "actually",
        ),
        person=(
            "speak to someone", "speak to a person", "speak to a human", "speak with someone", "speak with a person",
            "talk to someone", "talk to a person", "talk to a human", "talk to a real person", "a real person",
            "a real human", "speak to an agent", "talk to an agent", "speak to a manager", "a human agent",
            "speak to staff", "speak to a member of staff", "talk to a member of staff",
        ),
    ),
    # No bare "that": it opens the gate on closing turns ("That is all I need."), each then costing a
    # recall; "did you say" keeps the questions it rightly caught ("How much did you say that would cost?").
    recall=(
        "again", "earlier", "before", "previous", "you said", "you told", "you mentioned", "remind me", "what was",
        "which was", "did you say", "back then", "last time",
    ),
    secrets=Secrets(
        cues={
            "pin": (r"pins?", r"pin[\s-]?(?:number|code)"),
            "cvv": (
                r"cvv2?", r"cvc2?", "csc", r"security\s+code", r"card\s+security\s+code",
                r"card\s+verification\s+(?:code|value)", r"(?:three|3)\s+digits\s+on\s+the\s+back",
            ),
            "password": ("password", "passcode", "passphrase"),
            "otp": (
                r"one[\s-]?time\s+(?:code|password|passcode|pin)", "otp", r"verification\s+code", r"sms\s+code",
                r"text\s+code", r"code\s+(?:we|i)\s+(?:just\s+)?(?:sent|texted)(?:\s+you)?",
            ),
        },
        hints=("pin", "cvv", "cvc", "csc", "secur", "verif", "code", "pass", "otp", "digits on"),
        other_facts=(
            "account", "acct", "card", "phone", "mobile", "booking", "order", "reference", "room", "date", "birth",
            "born", "zip", "postcode", "amount", "balance",
        ),
        joins=("or", "and"),
        hedges=("maybe", "perhaps"),
        quantities=(
            "am", "pm", r"dollars?", r"euros?", r"pounds?", r"credits?", r"years?", r"days?", r"hours?", r"minutes?",
            "people", "persons", r"nights?", "kg", "km", r"miles?",
        ),
        password_verbs=(r"is\s+now", "is", "was"),
        not_passwords=(
            "not", "wrong", "incorrect", "invalid", "expired", "blocked", "locked", "correct", "right", "the", "my",
            "your", "a", "an", "too", "still", "also", "being", "no", "forgotten", "lost", "changed", "reset",
        ),
        password_replies=(
            "yes", "sure", r"ok(?:ay)?", r"it\s*['’]?\s*s", r"it\s+is", r"that\s*['’]?\s*s", r"my\s+password\s+is",
        ),
        cards=(
            "card", "visa", r"master\s?card", "amex", r"american\s+express", "maestro", "discover", "credit", "debit",
        ),
        not_cards=(
            "account", "acct", "iban", "phone", "tel", "mobile", "order", "booking", "reference", "tracking", "member",
            "customer", "policy",
        ),
        national_ids={
            "ssn": (r"social\s+security(?:\s+(?:number|no))?", "ssn", r"ss\s?#"),
            "nino": (r"national\s+insurance(?:\s+(?:number|no))?", r"ni\s+(?:number|no)", "nino"),
            "steuer_id": (r"tax\s+id(?:entification)?(?:\s+number)?",),
            "bsn": (r"citizen\s+service\s+number",),
        },
        id_hints=("social", "ssn", "ss#", "insurance", "ni n", "nino", "tax id", "citizen"),
        asks=(
            r"(?:give|tell|send|provide|confirm|share|read|text|say|spell|repeat|type|enter|verify)\s+(?:me|us)\b",
            r"(?:could|can|would|will)\s+you\s+(?:please\s+)?(?:just\s+)?(?:give|tell|send|provide|confirm|share|read|"
            r"type|enter|say|verify|repeat|spell)\b",
            r"(?:please|kindly)\s+(?:just\s+)?(?:give|tell|send|provide|confirm|share|read|type|enter|say|verify|repeat|"
            r"spell|reply)\b",
            r"\b(?:what|which)\s*(?:'s|\s+is|\s+was|\s+are)\s+(?:your|the)\b",
            r"\b(?:i|we)(?:\s+will|'ll|\s+would|'d|\s+do)?\s+(?:still\s+|also\s+|just\s+|first\s+)?"
            r"(?:need|require)\s+(?:your|the|you\s+to|to\s+(?:have|get|know|check|verify|confirm)\s+(?:your|the))\b",
            r"\b(?:can|could|may)\s+i\s+(?:please\s+)?(?:have|get|ask\s+for|take)\b",
            r"\blet\s+me\s+(?:have|know)\s+(?:your|the)\b",
            r"\b(?:your|the)\s+(?:[\w-]+\W+){0,3}?[\w-]+\W*\b(?:please|pls)\W*$",
            r"^\W*(?:and|also|now|next|lastly|finally)?\W*(?:your|the)\s+(?:[\w-]+\W+){0,3}?[\w-]+\W*\?",
            r"\b(?:reply|respond|answer)\s+with\b",
        ),
        clauses=("if", "whether", "when", "which", "why", "how", "where", "who", "reason", "because", "since", "after", "before", "until"),
        pointers=(r"(?:the|that|this)\s+code",),
        warnings=(
            r"\bnever\b", r"\b(?:do|does|will|wo|would|should|must|ca|can|did)(?:\s+not|n't)\s+(?:\w+\s+){0,2}?"
            r"(?:share|give|tell|send|disclose|reveal|write|ask|need|require|enter|type|say|request)\b",
            r"\bno\s+one\b", r"\bnobody\b", r"\bany(?:one|body)\b", r"\bthird\s+part(?:y|ies)\b",
            r"\b(?:at|on|into|in|with|using|through)\s+(?:the\s+|our\s+|your\s+|a\s+)?(?:terminal|card\s+reader|keypad|"
            r"pin\s*pad|atm|cash\s+machine|cashpoint|app|website|online\s+banking|banking\s+app)\b",
        ),
    ),
    numbers=Numbers(spellings={"oh": "0"}, repeats={"double": 2, "triple": 3}),
    times=Times(
        ordinals=("st", "nd", "rd", "th"),
        day_articles=("the",),
        day_leads=tuple("the on to through thru till until from by before after month".split()),
        not_days_after=tuple(
            """
            and floor floors fl street st avenue ave place row century grade birthday anniversary time times round
            edition generation option choice person people
            """.split()
        ),
        this_month=("of this month", "of next month", "of the next month", "of the following month"),
        day_parts={
            "in the morning": "am", "in the afternoon": "pm", "in the evening": "pm", "at night": "pm", "tonight": "pm",
        },
        oclock=("o'clock", "o 'clock", "o ' clock", 'o"clock'),
        promisers=tuple("we i you it someone somebody they he she".split()),
        promiser_determiners=("our", "your", "the", "a", "an"),
        promise_verbs=(
            "'ll", "will", "shall", "should", "are going to", "is going to", "am going to", "promise to", "guarantee to",
            "can expect",
        ),
        promised=tuple(
            """
            refund reimbursement replacement delivery callback response reply credit payment confirmation answer
            decision update
            """.split()
        )
        + ("call back",),
        within=("within", "in", "inside", "under"),
        within_next=("the next",),
        counts_said=(
            *"one two three four five six seven eight nine ten eleven twelve fourteen thirty a an".split(),
            "a few", "a couple of",
        ),
        ranges=("to", "or"),
        unit_kinds=("business", "working", "calendar"),
        units=tuple("minute minutes hour hours day days week weeks month months hr hrs min mins".split()),
        by=("by", "before", "no later than", "until"),
        deadlines=(
            "end of day", "end of the day", "end of week", "end of the week", "end of month", "end of the month",
            "end of business day", "end of the business day", "tomorrow", "tomorrow morning", "tomorrow afternoon",
            "tomorrow evening", "tonight", "noon", "midday", "midnight", "close of business",
        ),
        next=("next",),
        timetable=("arrive", "arrives", "arriving", "depart", "departs", "leave", "leaves", "get you in", "run", "runs"),
    ),
    names=NAMES,
    entities=ENTITIES,
    ledger=Ledger(
        corrections=(
            r"autocorrect(?:ed)?",
            r"sorry(?!\s+(?:to|for|about|but)\b)", r"i\s+meant", r"i\s+mean", r"no\s+wait", "wait", "correction",
            "actually", r"wrong\s+(?:one|number|digits?)", r"(?:that|it)\s+was\s+wrong", r"my\s+(?:mistake|bad)",
            r"correct\s+(?:that|myself)", r"scratch\s+that", "oops", "typo", r"not\s+\S+\s+but", r"make\s+that",
            r"or\s+rather", r"(?:it|that)\s+should\s+(?:be|have\s+been)", r"let\s+me\s+correct",
            r"now\s+it\s*['’]?\s*s", r"now\s+it\s+is",
        ),
        denials=("no", "nope", r"that\s*['’]?s\s+(?:not\s+right|wrong|incorrect)", "incorrect", r"not\s+quite"),
        additions=("another", "other", "second", "also", r"as\s+well", "additional", "too"),
        value_labels={
            "account": (
                "checking", "chequing", r"savings?", "current", "joint", "business", "personal", "credit", "loan",
                "isa", "home", "private",
            ),
            "customer_id": ("business", "personal", "private", "home", "work"),
            "username": ("web", "website", "online", "app", "mobile", "work", "personal", "game"),
            "phone": (
                "mobile", r"cell(?:phone)?", "work", "office", "home", "landline", "business", "personal", "direct",
                "main", "daytime", "evening",
            ),
            "email": ("work", "personal", "home", "business", "school"),
            "name": (r"(?:first|given)\s+name", r"(?:last|family)\s+name", "surname"),
            "address": ("home", "work", "billing", "delivery", "shipping", "postal", "business"),
            "card": ("debit", "credit", "visa", r"master\s?card", "amex", "business", "personal"),
        },
        subjects=(
            "hotel", "restaurant", "taxi", "cab", "car", "driver", "museum", "gallery", "bank", "branch", "shop",
            "store", "office", "clinic", "hospital", "doctor", "dentist", "pharmacy", "airport", "station", "airline",
            "theatre", "theater", "cinema", "college", "church", "park", "pool", "club", "bar", "pub", "cafe",
            r"guest\s?house", "attraction", "venue", "agency", "helpline", "hotline", "reception", "desk",
        ),
        not_subjects=tuple(
            """
            the a an their its his her our your my i you we they it this that these those there here he she please sure
            great okay ok yes no thanks thank certainly sorry also and or but phone number telephone contact call mobile
            """.split()
        ),
    ),
    language_names={
        "en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian", "nl": "Dutch",
        "pt": "Portuguese", "pl": "Polish", "sv": "Swedish", "da": "Danish", "nb": "Norwegian", "fi": "Finnish",
        "cs": "Czech", "tr": "Turkish", "ru": "Russian", "uk": "Ukrainian", "ar": "Arabic", "zh": "Chinese",
        "ja": "Japanese", "ko": "Korean", "hi": "Hindi", "el": "Greek", "ro": "Romanian", "hu": "Hungarian",
    },
    knowledge=KnowledgeCues(
        greetings=(
            "hi", "hello", "hey", r"good\s+(?:morning|afternoon|evening)", r"how\s+are\s+you", r"nice\s+to\s+meet\s+you",
        ),
        thanks=(r"thanks?(?:\s+you)?(?:\s+(?:so|very)\s+much|\s+a\s+lot)?", "cheers", "bye", "goodbye", r"see\s+you", r"that'?s\s+all", r"have\s+a\s+nice\s+day", r"for\s+(?:all\s+)?(?:your|the)\s+help"),
        fillers=(
            "ok", "okay", "um+", "uh+", "hm+", "hh", "er+", "ah", "oh", "so", "and", "well", "great", "perfect", "awesome",
            "cool", "nice", "excellent", "fine", "good", "sure", "yes", "yeah", "right", r"all\s+right", "alright",
            r"thanks?(?:\s+you)?", r"got\s+it", r"sounds?\s+(?:good|great|perfect)", "also", "then",
        ),
        questions=(
            r"(?:do|does|did|is|are|was|were|can|could|will|would|may|have|has)\s+(?:they|you|i|we|it|there|this|that|he|she|anyone|someone|the)",
            "what", "whats", "when", "where", "which", "who", "how", "why", "whether", "if",
        ),
        open_questions=("what", "whats", "when", "where", "which", "who", "how", "why"),
        polar=(
            r"(?:do|does|did|is|are|was|were|will|would|may|have|has|can|could)\s+(?:they|it|there|this|that|these|those|he|she|anyone|someone|the|its|their|any)",
            r"(?:do|does|did|will|would)\s+you", "whether", "if",
        ),
        actions=(
            "book", "booking", "reserve", r"find(?!\s+out)", r"look(?:ing)?\s+for", r"recommend\w*", r"suggest\w*",
            r"search\s+for", r"(?:get|have)\s+(?:a|the)\s+table", r"(?:how|what)\s+about\s+(?:a|an|another|any|some)",
            "another", r"any\s+other", "somewhere", "anywhere",
            r"(?<!there\s)(?<!there's\s)(?<!have\s)(?<!has\s)(?:a|any)\s+place\s+(?:to|for|that|where|i|we)",
            r"give\s+me\s+(?:a|an|some)", r"same\s+(?:area|neighbou?rhood|district|vicinity|part\s+of\s+(?:town|the\s+city))",
            "buy", "purchase", r"order\s+(?:a|an|some|me|us|the|it|them|one)",
            r"(?:i|we)(?:\s+(?:need|want|would\s+like)|'d\s+like|'m\s+after)\s+(?:a|an|two|three|four)",
        ),
        procedures=(
            r"how\s+(?:do|can|could|should|would|does|must)\s+(?:i|we|you|one|someone|my|a|the)", r"how\s+to",
            r"what\s+do\s+(?:i|we)\s+(?:need|have)\s+to",
        ),
        repeats=(
            r"(?:can|could|would|will)\s+you\s+(?:please\s+)?repeat", r"please\s+repeat", r"repeat\s+(?:that|it|this)",
            r"say\s+(?:that|it)\s+again", r"come\s+again", r"what\s+did\s+you\s+(?:just\s+)?say",
            r"you\s+just\s+(?:said|gave|told|mentioned)",
        ),
        hesitations=("u+m+", "u+h+", "h+m+", "e+r+m*", "a+h+", "hh+", "mm+"),
        numbers=(
            "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
            "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
        ),
        tens=("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"),
        ordinals=(
            "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh",
            "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth",
        ),
    ),
    replies=Replies(
        yes=("yes", "yeah", "yep", "yup"),
        no=("no", "nope", "unfortunately", "sadly", r"i['’]?m\s+afraid\s+not"),
        absences=(
            r"there\s*(?:is|are|['’]s|was|were)\s+no", r"(?:has|have|had)\s+no", "never", "none", "nobody", "nothing",
            "neither", "nor", r"no\s+longer",
        ),
        negations=(
            r"(?:do|does|did|is|are|was|were|am|can|could|will|would|shall|should|may|might|must|has|have|had)\s+not",
            r"\w+n['’]t", "cannot", r"(?:is|are|was|were)\s+no\s+longer",
        ),
        contrasts=("but", "except", "only", "however", "although", "though", "unless", "as long as", "provided"),
    ),
)
# fmt: on
