"""English: the names of people (:class:`~appliance.lexicon.schema.Names`), the largest group of the
English lexicon, kept in a module of its own so that :mod:`appliance.lexicon.en` stays readable.
"""

from appliance.lexicon.schema import Names

# fmt: off
NAMES = Names(
    self_cues=(
        r"my\s+name\s+is", r"my\s+name\s*['’]\s*s", r"name\s*['’]\s*s", r"call\s+me", r"my\s+full\s+name\s+is",
        r"i\s*['’]\s*m", r"i\s+am", r"speaking\s+with", r"you\s*['’]\s*re\s+speaking\s+to",
        r"i\s+go\s+by\s+the\s+name(?:\s+of)?", r"i\s+go\s+by",
    ),
    self_hints=("name", "call me", "i'm", "i’m", "i am", "i ’m", "i 'm", "speaking", "go by"),
    unmarked_cues=("im",),
    your_cues=(
        r"(?:your|the)\s+(?:full\s+)?name\s+(?:is|was|you\s+gave(?:\s+me)?\s+(?:is|was)|"
        r"on\s+(?:the|your)\s+(?:account|file|record|booking|reservation)\s+is)",
        r"you\s+(?:gave|told)\s+me\s+(?:the\s+name|your\s+name\s+as)", r"you\s+(?:are|were)\s+called",
    ),
    your_hints=("name", "called"),
    firm_cues=(
        r"my\s+(?:full\s+|first\s+|last\s+|given\s+|family\s+|sur)?name\s+is", r"my\s+(?:full\s+)?name\s*['’]\s*s",
        r"i\s+go\s+by\s+the\s+name(?:\s+of)?", r"i\s+go\s+by",
    ),
    labels=(r"(?:full\s+)?name\s*(?:is|:)", r"name\s*['’]\s*s"),
    label_hints=("name",),
    part_labels=(r"(?:first|last|given|family|middle|christian)\s+name", "surname", "forename"),
    holder_cues=(r"in\s+the\s+name\s+of", r"under\s+the\s+name(?:\s+of)?", r"(?:booked|reserved|held)\s+under"),
    kin=(r"(?:my|our)\s+(?:son|daughter|wife|husband|partner|mother|father|mum|mom|dad|brother|sister|kid)",),
    holder_words=("under",), reply_holders=("for", "under"),
    introductions=(r"this\s+is",),
    greeted=(r"it\s*['’]?\s*s", r"it\s+is"),
    sign_offs=(
        r"(?:kind|best|warm|warmest|many)\s+regards", "regards", "best", "thanks", r"thanks\s+again",
        r"thank\s+you", r"many\s+thanks", "cheers", r"(?:yours\s+)?sincerely", r"yours\s+truly", "rgds", "ta",
        r"thanks\s+in\s+advance", r"thank\s+you\s+in\s+advance", r"all\s+the\s+best", r"best\s+wishes",
    ),
    common_words=tuple(
        """
        i me my mine you your yours he him his she her hers it its we us our they them their this that these those
        there here what who whom whose which when where why how is am are was were be been being do does did done
        have has had will would shall should can could may might must need needs want wants wanted like not no nope
        never dont don't cant can't wont won't didnt didn't doesnt doesn't isnt isn't im i'm ive i've id i'd ill
        i'll its it's thats that's whats what's yes yeah yep ok okay sure please pls thanks thank sorry hello hi hey
        help remember know knew think forgot forget still just really very so too also only maybe and or but if
        because with without from into about for of to in on at by as than then now later today tomorrow yesterday
        soon again already yet all any some none every each much many more most less few lot lots one two three four
        five first last next same other another new old good bad great fine right wrong get got give gave take took
        make made go went come came see saw say said tell told ask asked call called try tried use used pay paid
        send sent buy bought order ordered card account number phone email name misspelled spelled spelt incorrect
        listed missing changed different correct fixed working works broken waiting rather prefer forgotten urgent
        request status update issue problem question query complaint feedback inquiry enquiry refund return delivery
        shipping payment invoice mail post service support wishes regards greetings off up out down over super
        pretty quite totally absolutely completely extremely bit little regarding concerning re since until asap
        probably definitely honestly basically thing things stuff lol haha omg idk btw plz thx ty myself yourself
        himself herself ourselves themselves near behind opposite past beside between towards toward outside inside
        via around across along beyond ur yr
        """.split()
    ),
    here=("here", "speaking"),
    here_hints=("here", "speaking"),
    greetings=("hi", "hello", "hey", r"h(?:i|ello|ey)\s+there", "hiya", r"good\s+(?:morning|afternoon|evening|day)"),
    addressing=("hi", "hello", "hey", "dear", "thanks", r"thank\s+you", "welcome", "bye", "goodbye", "sorry"),
    assent=("yes", "sure", "okay", "ok", "certainly"),
    titles=("Mr", "Mrs", "Ms", "Miss", "Mx", "Dr", "Prof", "Fr", "Rev"),
    after=(
        "and", "here", "speaking", r"is\s+my\s+name", "again", "thanks", r"thank\s+you", "please", "pls", "cheers", "thx",
        "ty",
    ),
    leads=(
        "yes", "yeah", "yep", "yup", "sure", r"ok(?:ay)?", r"of\s+course", "certainly", "right", "well", "so",
        "um+", "uh+", "er+m*", "hmm+", "hi", "hello", "hey", r"good\s+(?:morning|afternoon|evening)", "me",
    ),
    it_is=(
        r"it\s*['’]?\s*s", r"it\s+is", r"that\s*['’]?\s*s", r"that\s+is", r"this\s+is", r"it\s+was",
        r"(?:my\s+)?(?:full\s+)?name\s*(?:['’]\s*s|is|:)", r"under(?:\s+the\s+name(?:\s+of)?)?",
        r"(?:spelled|spelt|written)(?:\s+as)?", r"(?:that|it)\s+(?:would|will|should)\s+be",
        r"that\s*['’]\s*d\s+be",
    ),
    not_names=tuple(
        """
        a an the this that it i you he she we they me my your our his her their sir madam maam ma'am miss sorry
        afraid not so very really just also here there back glad happy sure okay ok fine good great looking
        interested trying going calling writing wondering hoping planning traveling travelling coming staying
        visiting new still done ready able unable unsure confused calling again all everyone everybody anyone
        someone team guys folks again much lot lots everything anything nothing bye goodbye welcome hello hi hey yes
        no please thanks thank cheers customer service support agent calling from with in on at for to of by about
        american canadian british english german french spanish dutch italian irish scottish australian mr mrs ms mx
        dr prof fr rev mate buddy pal
        """.split()
    ),
    not_names_after=tuple("i you he she we they and or but from with at for to of by in on the this that".split()),
    word_forms=(r"[^\W\d_]{3,}ing", r"[^\W\d_]{4,}ly"),
    sentence_starts=tuple(
        """
        Yes No Sure Please Thanks Thank Hello Hi Hey Okay Ok Great Good Fine Just Also Not Sorry Afraid Here There
        What Which When Where Why How Can Could Would Will Should Do Does Did Is Are Was Were In On At For To From
        With About After Before Now Then Today Tomorrow Tonight Yesterday Interested Looking Calling Trying Going
        Happy Glad Ready Unable Able New Back Done
        """.split()
    ),
    not_bare=tuple(
        """
        thanks thank please pls cheers thx
        nope nah yeah yep yup alright right well oh ah um uh hmm wait hold hang let one moment sec second maybe
        family perhaps actually anyway and but or so then if because though although however who whom whose i'm i'd
        i'll it's that's what's there's let's don't can't won't didn't isn't cool perfect awesome wonderful
        excellent nice fantastic brilliant lovely amazing correct exactly indeed true my our your his her its their
        some any no none every each both all other another next last first morning afternoon evening night noon
        midnight day days week weekend month year hour minute today tomorrow yesterday tonight am pm click look come
        sign stop start stay park get go put leave take give send call see check hotel hotels inn motel hostel house
        guesthouse lodge resort street st road rd avenue ave lane drive boulevard blvd square station airport
        terminal bank hospital clinic university college school church cathedral museum park centre center mall
        market restaurant cafe café bar pub theatre theater cinema gallery hall tower bridge city town village
        county state north south east west central downtown apartments apartment flat building office gym club pool
        plaza international airlines airways express group ltd inc llc gmbh corp company co limited bus train taxi
        cab uber lyft flight plane car ford bmw toyota honda tesla bike bicycle foot boat ferry tram metro subway
        tube coach ship settings setting menu tab options preferences section page folder screen card visa
        mastercard amex paypal cash credit debit account iphone android windows google apple amazon premium gold
        platinum silver plus pro service services support team department desk los las el san santa saint fort port
        mount mt lake old great little upper lower
        """.split()
    ),
)
# fmt: on
