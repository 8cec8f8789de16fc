"""Dutch."""

from appliance.lexicon.schema import (
    Entities,
    KnowledgeCues,
    Ledger,
    Lexicon,
    Names,
    Numbers,
    ReadBack,
    Requests,
    Secrets,
    StageCues,
)

# fmt: off
LEXICON = Lexicon(
    code="nl",
    compounding=True,
    requests=Requests(
        cues={
            "name": (
                "uw naam", "je naam", "uw volledige naam", "hoe heet u", "hoe heet je", "uw voor en achternaam",
                "op welke naam", "op wiens naam", "met wie spreek ik", "wie heb ik aan de lijn", "uw achternaam",
                "welke naam", "uw voornaam", "u bent meneer", "u bent mevrouw", "en u bent",
            ),
            "account": ("rekeningnummer", "iban", "welke rekening", "contractnummer"),
            "card": ("kaartnummer", "pasnummer", "laatste vier cijfers", "laatste 4 cijfers", "welke kaart", "welke pas"),
            "customer_id": ("klantnummer", "klant id"),
            "member_number": ("lidnummer", "lidmaatschapsnummer"),
            "member_level": ("lidmaatschapsniveau", "niveau van uw lidmaatschap", "welk niveau", "welke status"),
            "username": ("gebruikersnaam", "inlognaam", "login"),
            "ticket": ("ticketnummer", "storingsnummer", "meldingsnummer", "welk ticket"),
            "reference": ("reserveringsnummer", "boekingsnummer", "referentienummer", "bevestigingsnummer"),
            "order": ("bestelnummer", "ordernummer", "factuurnummer", "trackingnummer"),
            "case": ("zaaknummer", "klachtnummer", "dossiernummer"),
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
        asking=("alstublieft", "graag", "kunt", "kun", "mag"),
        pointing=("het", "dit", "dat"),
        leads=("zeker", "ja", "jawel", "hoor", "oké", "prima", "tuurlijk", "nou", r"het\s+is", r"dat\s+is"),
        plurals=("s", "en"),
        nouns={
            "name": ("naam", "voornaam", "achternaam"), "account": ("rekening",), "card": ("kaart", "pinpas", "bankpas"),
            "member_number": ("lid", "lidmaatschap"), "member_level": ("lid", "lidmaatschap"),
            "ticket": ("ticket", "melding"), "reference": ("reservering", "boeking"), "order": ("bestelling",),
        },
        listeners=("uw", "je", "jouw"),
        who=(
            r"\b(?:met|voor|op\s+naam\s+van)\s+wie\b", r"\bwie\s+(?:spreek\s+ik|is\s+(?:er\s+)?aan\s+de\s+lijn|belt\s+er)\b",
            r"(?:^|\ben\s+|,\s*)u\s+bent\s*(?:\.\.\.|…)?\s*\?",
        ),
    ),
    readback=ReadBack(
        topics={
            "birthdate": r"geboortedatum|verjaardag",
            "email": r"e-?mail(?:adres)?",
            "phone": r"telefoonnummer|telefoon|mobiel(?:e)?\s+nummer|gsm(?:-?nummer)?",
            "postcode": r"postcode",
            "address": r"adres",
            "customer_id": r"klantnummer",
            "member_number": r"lidnummer|lidmaatschapsnummer",
            "member_level": r"lidmaatschapsniveau|niveau",
            "username": r"gebruikersnaam|inlognaam|login",
            "ticket": r"ticketnummer|ticket|storingsnummer|meldingsnummer",
            "card": r"kaartnummer|pasnummer|kaart|pas",
            "account": r"rekeningnummer|rekening|iban",
            "train": r"treinnummer|trein",
            "order": r"bestelnummer|bestelling|trackingnummer|factuurnummer",
            "case": r"zaaknummer|dossiernummer",
            "reference": r"referentie(?:nummer)?|boekingsnummer|reserveringsnummer|bevestigingsnummer|boekingscode",
            "amount": r"hoeveel|bedrag|geld|som|prijs|kosten",
            "name": r"(?:volledige\s+|achter|voor)?naam",
            "date": r"datum",
            "time": r"hoe\s+laat|tijd",
        },
        request=(
            r"wat\s+(?:was|is)\s+(?:mijn|ons|onze)", r"herinner\s+(?:me|mij)", "herhalen", "herhaal", "voorlezen",
            "teruglezen", r"heb\s+ik\b[^.?!]{0,25}\b(?:gegeven|genoemd|gezegd|opgegeven|doorgegeven)",
            r"(?:u|je)\s+(?:mij|me)\b[^.?!]{0,20}\b(?:gegeven|gezegd|doorgegeven)",
        ),
        again=(r"nog\s+(?:een\s+keer|eens)", "nogmaals", "opnieuw"),
        asking=("wat", "welke", "hoeveel", "zeggen", "zeg", "geven", "bevestigen"),
        first=(r"in\s+het\s+begin", r"aan\s+het\s+begin", "eerst", "oorspronkelijk", "aanvankelijk"),
        earlier=("eerder", "daarnet", "zonet", "voorheen"),
        labels={
            "birthdate": ("Uw geboortedatum", "De geboortedata"),
            "email": ("Uw e-mailadres", "De e-mailadressen"),
            "phone": ("Uw telefoonnummer", "De telefoonnummers"),
            "postcode": ("Uw postcode", "De postcodes"),
            "address": ("Uw adres", "De adressen"),
            "customer_id": ("Uw klantnummer", "De klantnummers"),
            "member_number": ("Uw lidnummer", "De lidnummers"),
            "member_level": ("Uw lidmaatschapsniveau", "De niveaus"),
            "username": ("Uw gebruikersnaam", "De gebruikersnamen"),
            "ticket": ("Uw ticketnummer", "De ticketnummers"),
            "card": ("Uw kaart eindigt op {}.", "Uw kaarten eindigen op {}."),
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
        verbs=("is", "zijn"),
        conjunction="en",
    ),
    stage=StageCues(
        late=(
            "bedankt", "dank je", "dank u", "dat is alles", "dat was het", "verder niets", "opgelost", "tot ziens",
            "doei", "fijne dag",
        ),
        open=("?", "ook", "ik wil", "ik zou graag", "ik heb nodig", "kunt u", "kun je"),
        person=(
            "iemand spreken", "met iemand praten", "een echt persoon", "een echte persoon", "een echt mens",
            "met een medewerker", "een medewerker spreken", "met een mens",
        ),
    ),
    recall=("opnieuw", "eerder", "nog eens"),
    secrets=Secrets(
        cues={
            "pin": ("pincode",),
            "cvv": ("beveiligingscode", r"verificatiecode\s+van\s+de\s+kaart"),
            "password": ("wachtwoord",),
            "otp": (r"eenmalige\s+code", "sms-code"),
        },
        hints=("beveilig", "wachtwoord", "pin", "code"),
        other_facts=("rekening", "kaart"),
        joins=("of", "en"),
        hedges=("misschien",),
        password_verbs=("is",),
        not_passwords=("niet", "fout", "verlopen", "geblokkeerd"),
        cards=("kaart", "creditcard"),
        not_cards=("rekening",),
        national_ids={"bsn": ("bsn", "burgerservicenummer", r"sofi[\s-]?nummer")},
        id_hints=("bsn", "burgerservice", "sofi"),
        asks=(
            r"\b(?:kunt|kan|wilt|zou|zoudt)\s+u\b", r"\b(?:kun|wil)\s+je\b", r"\bik\s+heb\s+(?:\w+\s+){0,4}?nodig\b",
            r"\bwe\s+hebben\s+(?:\w+\s+){0,4}?nodig\b", r"\bwat\s+is\s+(?:uw|je|jouw)\b",
            r"\bgeef\s+(?:mij|me|ons)\b", r"\bgraag\s+(?:uw|je)\b",
            r"\b(?:uw|je|de|het)\s+(?:[\w-]+\W+){0,3}?[\w-]+\W*\b(?:alstublieft|alsjeblieft|graag)\W*$",
            r"^\W*(?:en)?\W*(?:uw|je)\s+(?:[\w-]+\W+){0,3}?[\w-]+\W*\?",
        ),
        clauses=("of", "wanneer", "welke", "waarom", "hoe", "waar", "wie", "reden", "omdat", "sinds", "nadat", "voordat"),
        pointers=(r"(?:de|die|deze)\s+code",),
        warnings=(
            r"\bnooit\b", r"\bniemand\b", r"\bniet\b",
            r"\b(?:bij|aan|in|op)\s+(?:de|het|uw)\s+(?:geldautomaat|betaalautomaat|automaat|terminal|app|website|"
            r"internetbankieren)\b",
            r"\bper\s+post\b",
        ),
    ),
    numbers=Numbers(
        digits=(
            ("nul",), ("een", "één", "eén"), ("twee",), ("drie",), ("vier",), ("vijf",), ("zes",), ("zeven",),
            ("acht",), ("negen",),
        ),
    ),
    names=Names(
        self_cues=(r"ik\s+heet", r"mijn\s+naam\s+is", r"ik\s+ben"),
        firm_cues=(r"ik\s+heet", r"mijn\s+(?:volledige\s+)?naam\s+is"),
        labels=(r"(?:volledige\s+)?naam\s*(?:is|:)",),
        label_hints=("naam",),
        part_labels=("voornaam", "achternaam", "familienaam", "roepnaam"),
        kin=(r"(?:mijn|onze)\s+(?:zoon|dochter|vrouw|man|partner|moeder|vader|broer|zus|kind|vriend(?:in)?)",),
        holder_cues=(r"op\s+(?:de\s+)?naam\s+van", r"onder\s+de\s+naam(?:\s+van)?"),
        reply_holders=("voor",),
        introductions=(r"u\s+spreekt\s+met", r"je\s+spreekt\s+met", r"hier\s+is"),
        greeted=("met",),
        openers=("met",),
        sign_offs=(
            r"groet(?:en|jes)?", r"met\s+vriendelijke\s+groet(?:en)?", r"vriendelijke\s+groet(?:en)?", "mvg",
            "bedankt", r"alvast\s+bedankt", r"dank\s+(?:je|u)(?:\s+wel)?", r"bij\s+voorbaat\s+dank",
        ),
        common_words=tuple(
            """
            ik me mij mijn jij je jou jouw u uw hij zij ze het wij we ons onze jullie hun haar zijn de een en of
            maar niet geen nee ja wel ook nog al alleen heel erg waarom wat wie hoe waar wanneer welke is ben bent
            was waren heb hebt heeft hebben had kan kunt kunnen wil wilt willen moet moeten weet weten zeggen zeg
            geef geven dank bedankt alvast hallo hoi vandaag morgen gisteren nu hier daar met van voor op in aan bij
            naar uit over onder om dat dit die deze hoor oké ok nou eh zeer graag even toch dus sinds al
            moment momentje ogenblik ogenblikje
            """.split()
        ),
        self_hints=("heet", "naam", "ik ben"),
        your_cues=(r"uw\s+naam\s+is", r"je\s+naam\s+is", r"u\s+heet"),
        your_hints=("naam", "heet"),
        here=("hier",),
        here_hints=("hier",),
        greetings=("hallo", "goedemorgen", "goedemiddag", "goedenavond", "goedendag", "hoi", "hee", "dag"),
        addressing=("hallo",),
        titles=("Dhr", "Mevr"),
        particles=("van", "der", "den", "ten", "ter", "de", "'t", "’t"),
        after=("en", "hier", "weer", r"nog\s+een\s+keer", "alstublieft", "aub", "graag", "bedankt", r"dank\s+(?:je|u)(?:\s+wel)?"),
        leads=(
            "zeker", "natuurlich", "jazeker", "ja", "jawel", "hoor", "oké", "prima", "tuurlijk", "nou", "hallo", "eh+",
            "uhm+", "ik",
        ),
        it_is=(r"dat\s+is", r"het\s+is", r"op\s+(?:de\s+)?naam\s+van", "met"),
        not_names=("nee", "dhr", "mevr", "wel"),
        sentence_starts=tuple(
            """
            Ik U Mijn Uw Wij We Het Een Hallo Dank Bedankt Ja Nee Waarom Hoe Wanneer Waar Wat Welke Kunt Kan
            Heeft Heb Is Zijn Vandaag Morgen Gisteren Sinds Over Graag
            """.split()
        ),
        not_bare=tuple(
            "straat plein luchthaven laan gracht dank bedankt alstublieft graag hoi goedemorgen zeker prima moment momentje "
            "ogenblik ogenblikje "
            "familie team".split()
        ),
    ),
    ledger=Ledger(
        corrections=(
            "typfout", "tikfout", "autocorrectie",
            "sorry", "excuses", "pardon", r"ik\s+bedoelde", r"ik\s+bedoel", "correctie", "eigenlijk", r"nee\s+wacht",
            "wacht", r"ik\s+vergiste\s+me", "foutje", r"of\s+nee", r"nee\s+sorry", "oeps", "verbetering",
            r"nu\s+is\s+(?:het|hij|ze)",
        ),
        denials=("nee", r"dat\s+klopt\s+niet", "fout"),
        additions=(r"andere?", "ook", "tweede", "nog"),
        value_labels={
            "account": (
                "betaalrekening", "spaarrekening", "zakelijke", "gezamenlijke", "privérekening", "en/of-rekening",
                "privé", "zakelijk", "thuis",
            ),
            "customer_id": ("privé", "zakelijk"),
            "username": ("web", "app", "website"),
            "phone": (
                "mobiel", "mobiele", "werk", "thuis", "vast", "vaste", "zakelijk", "zakelijke", "privé", "kantoor",
            ),
            "email": ("werk", "privé", "zakelijk"),
            "name": ("voornaam", "achternaam"),
            "address": ("thuis", "werk", "bezorgadres", "factuuradres"),
            "card": ("creditcard", "betaalpas", "pinpas"),
        },
        subjects=(
            "hotel", "restaurant", "taxi", "museum", "bank", "filiaal", "winkel", "kantoor", "kliniek", "apotheek",
            "luchthaven", "station", "bioscoop", "theater", "receptie", "centrale",
        ),
        not_subjects=tuple("de het een hun haar zijn u uw wij we ik ze zij dank ja nee".split()),
    ),
    entities=Entities(
        labels={
            "reference": ("boeking", "reserverings?", "referentie"),
            "order": ("bestelling", "bestel", "factuur"),
            "case": ("zaak", "claim", "schade", "klacht"),
            "ticket": ("ticket", "storings", "meldings"),
            "account": ("rekening", "contract"),
            "card": ("kaart", "pas"),
            "customer_id": ("klant",),
            "member_number": ("lid", "lidmaatschaps"),
        },
        username_labels=("gebruikersnaam", "inlognaam", "login"),
        level_labels=("lidmaatschapsniveau", r"niveau\s+van\s+(?:mijn|uw)\s+lidmaatschap"),
        card_words=("kaart", "pas", "pinpas", "bankpas", "creditcard", "betaalpas"),
        card_tails=(
            r"eindigend\s+op", r"(?:die\s+)?eindigt\s+op", r"met\s+eind(?:cijfers|nummer)",
            r"(?:de\s+)?laatste\s+(?:vier|4)(?:\s+cijfers)?(?:\s+zijn)?",
        ),
        card_ends_before=("op",),
        card_ends=("eindigt", "eindigen"),
        levels=("brons", "zilver", "goud", "platina", "premium", "gold", "silver", "vip"),
        level_nouns=("lid", "lidmaatschap", "abonnement", "klant", "niveau", "status"),
        counts=("twee", "drie", "vier", "beide", "meerdere"),
        card_last=(r"laatste\s+(?:vier|4)\s+cijfers\s+van\s+(?:mijn|de|uw)\s+(?:kaart|pas)\s*(?:zijn|:)",),
        compounds=("nummer", "nr"),
        number_words=("nr", "nummer"),
        label_verbs=("is",),
        value_first=(r"(?:is|was)\s+(?:mijn|ons|onze)",),
        articles=("het", "de"),
        determiners=tuple("een de het mijn m'n ons onze uw je jouw dit dat deze die zijn haar hun".split()),
        qualifiers=("van", "voor", "op", "bij", "in"),
        months=(
            ("januari",), ("februari",), ("maart",), ("april",), ("mei",), ("juni",), ("juli",), ("augustus",),
            ("september",), ("oktober",), ("november",), ("december",),
        ),
        ambiguous_months=("mei",),
        weekdays=(
            ("maandag",), ("dinsdag",), ("woensdag",), ("donderdag",), ("vrijdag",), ("zaterdag",), ("zondag",),
        ),
        day_of=("van",),
        phone_cues=("telefoon", "mobiel", "gsm", "nummer", "bellen", "bereiken", "bereikbaar"),
        number_nouns=("nummer",),
        birth_cues=("geboortedatum",),
        address_cues=(r"mijn\s+adres", r"uw\s+adres"),
        address_joins=("en",),
        balance=("saldo",),
    ),
    knowledge=KnowledgeCues(
        greetings=("hallo", "hoi", r"goede(?:n)?\s*(?:morgen|middag|avond)", "dag", r"hoe\s+gaat\s+het"),
        thanks=("dank", r"dank\s+(?:je|u)(?:\s+wel)?", "bedankt", r"tot\s+ziens", "doei", r"dat\s+was\s+het", r"voor\s+(?:uw|je)\s+hulp"),
        fillers=("ok", "oke", "goed", "prima", "mooi", "super", "ja", "dus", "en", "eh", "ah", "oh", "bedankt"),
        hesitations=("u+h*m+", "e+h+m*", "h+m+"),
        questions=(
            r"(?:hebben|heeft|is|zijn|kan|kunnen|mag|accepteren|bieden)\s+(?:jullie|u|je|ik|het|er|we)",
            "wat", "wanneer", "waar", "hoe", "welke", "waarom", "of",
        ),
        actions=("boeken", "reserveren", r"zoek(?:en)?\s+(?:een|voor)", "aanraden", "vinden"),
    ),
)
# fmt: on
