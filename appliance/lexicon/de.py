"""German."""

from appliance.lexicon.schema import (
    Entities,
    KnowledgeCues,
    Ledger,
    Lexicon,
    Names,
    Numbers,
    ReadBack,
    Replies,
    Requests,
    Secrets,
    StageCues,
    Times,
)

# fmt: off
LEXICON = Lexicon(
    code="de",
    regions=("DE", "AT", "CH"),
    compounding=True,
    requests=Requests(
        cues={
            "name": (
                "ihren namen", "ihr name", "ihren vollständigen namen", "ihr vollständiger name",
                "ihren vor und nachnamen", "wie heißen sie", "wie ist ihr name", "wie lautet ihr name", "dein name",
                "deinen namen", "wie heißt du", "mit wem spreche ich", "mit wem ich spreche", "auf welchen namen",
                "unter welchem namen", "ihr nachname", "ihren nachnamen", "wer ist am apparat", "ihr vorname",
                "ihren vornamen", "sie sind herr", "sie sind frau", "und sie sind",
            ),
            "account": ("kontonummer", "iban", "vertragsnummer", "welches konto", "welchem konto"),
            "card": (
                "kartennummer", "letzten vier ziffern", "letzten 4 ziffern", "welche karte", "welcher karte",
                "welche kreditkarte", "welcher kreditkarte",
            ),
            "customer_id": ("kundennummer", "kunden id", "kundenkennung"),
            "member_number": ("mitgliedsnummer", "mitgliednummer"),
            "member_level": (
                "mitgliedsstufe", "mitgliedschaftsstufe", "statusstufe", "welchen status", "welche stufe",
                "welcher stufe",
            ),
            "username": ("benutzername", "nutzername", "benutzerkennung", "login", "anmeldename"),
            "ticket": (
                "ticketnummer", "ticket nummer", "ticket id", "störungsnummer", "meldungsnummer", "welches ticket",
            ),
            "reference": (
                "buchungsnummer", "referenznummer", "bestätigungsnummer", "reservierungsnummer", "buchungscode",
            ),
            "order": ("bestellnummer", "auftragsnummer", "rechnungsnummer", "sendungsnummer"),
            "case": ("vorgangsnummer", "fallnummer", "schadensnummer"),
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
        asking=("bitte", "können", "könnten", "geben", "nennen", "brauche", "benötige"),
        pointing=("es", "ihn", "sie"),
        leads=(
            "ja", "klar", "gerne?", "natürlich", "genau", r"(?:es|das|der|die|er|sie)\s+(?:ist|lautet)", "lautet",
        ),
        plurals=("n", "en", "e", "s"),
        nouns={
            "name": ("name", "vorname", "nachname"), "account": ("konto",), "card": ("karte",),
            "member_number": ("mitglied", "mitgliedschaft"), "member_level": ("mitglied", "mitgliedschaft"),
            "ticket": ("ticket",), "reference": ("buchung", "reservierung"), "order": ("bestellung",),
        },
        listeners=("ihr", "ihren", "ihre", "ihrem", "dein", "deinen", "deine"),
        of_words=("des", "der"),
        who=(
            r"\b(?:auf|für|unter)\s+wen\b", r"\bwer\s+(?:ist\s+(?:dran|da|am\s+apparat)|spricht)\b",
            r"(?:^|\bund\s+|,\s*)sie\s+sind\s*(?:\.\.\.|…)?\s*\?",
        ),
    ),
    readback=ReadBack(
        topics={
            "birthdate": r"geburtsdatum|geburtstag",
            "email": r"e-?mail(?:-?adresse)?",
            "phone": r"telefonnummer|handynummer|rufnummer|mobilnummer|telefon",
            "postcode": r"postleitzahl|plz",
            "address": r"adresse|anschrift",
            "customer_id": r"kundennummer|kunden-?id",
            "member_number": r"mitgliedsnummer",
            "member_level": r"mitglied(?:schaft)?sstufe|statusstufe",
            "username": r"benutzername|nutzername|anmeldename|login",
            "ticket": r"ticketnummer|ticket|storungsnummer|meldungsnummer",
            "card": r"kartennummer|karte",
            "account": r"kontonummer|konto|iban",
            "train": r"zugnummer|zug",
            "order": r"bestellnummer|bestellung|sendungsnummer|rechnungsnummer|auftragsnummer",
            "case": r"vorgangsnummer|fallnummer|aktenzeichen",
            "reference": (
                r"referenz(?:nummer)?|buchungs(?:nummer|code)|bestatigungs(?:nummer|code)|reservierungsnummer"
            ),
            "amount": r"wie\s*viel|betrag|geld|summe|preis|kosten|gebuhr",
            "name": r"(?:vor|nach|familien)?namen?",
            "date": r"datum",
            "time": r"uhrzeit|wie\s+spat",
        },
        request=(
            r"wie\s+(?:war|lautet(?:e)?|ist)\s+(?:meine?|unsere?)", r"was\s+(?:war|ist)\s+(?:meine?|unsere?)",
            r"(?:wiederholen|vorlesen|wiederholt)", r"erinnern\s+sie\s+mich", r"erinnere\s+mich",
            r"hab(?:e)?\s+ich\b[^.?!]{0,25}\b(?:gegeben|genannt|gesagt|mitgeteilt|angegeben)",
            r"sie\s+mir\b[^.?!]{0,20}\b(?:gegeben|genannt|gesagt|mitgeteilt)",
            r"ich\s+(?:ihnen|dir)\b[^.?!]{0,20}\b(?:gegeben|genannt|gesagt|mitgeteilt)",
        ),
        again=(r"noch\s*(?:ein)?mal", "nochmals", "erneut"),
        asking=("wie", "was", "welche[rsnm]?", "sagen", "nennen", "geben", "bestatigen"),
        first=(r"am\s+anfang", r"zu\s+beginn", "zuerst", "anfangs", "ursprunglich", r"als\s+erstes"),
        earlier=("vorhin", "vorher", "fruher", "zuvor", "eben"),
        labels={
            "birthdate": ("Ihr Geburtsdatum", "Die Geburtsdaten"),
            "email": ("Ihre E-Mail-Adresse", "Die E-Mail-Adressen"),
            "phone": ("Ihre Telefonnummer", "Die Telefonnummern"),
            "postcode": ("Ihre Postleitzahl", "Die Postleitzahlen"),
            "address": ("Ihre Adresse", "Die Adressen"),
            "customer_id": ("Ihre Kundennummer", "Die Kundennummern"),
            "member_number": ("Ihre Mitgliedsnummer", "Die Mitgliedsnummern"),
            "member_level": ("Ihre Mitgliedsstufe", "Die Mitgliedsstufen"),
            "username": ("Ihr Benutzername", "Die Benutzernamen"),
            "ticket": ("Ihre Ticketnummer", "Die Ticketnummern"),
            "card": ("Ihre Karte endet auf {}.", "Ihre Karten enden auf {}."),
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
        verbs=("ist", "sind"),
        conjunction="und",
    ),
    stage=StageCues(
        late=(
            "danke", "vielen dank", "dankeschön", "das ist alles", "das wäre alles", "alles was ich brauche",
            "sonst nichts", "nichts weiter", "erledigt", "gelöst", "tschüss", "auf wiedersehen", "schönen tag",
        ),
        open=("?", "auch", "außerdem", "ich brauche", "ich möchte", "ich hätte gern", "können sie", "könnten sie"),
        person=(
            "einen mitarbeiter", "eine mitarbeiterin", "mit einem menschen", "echten menschen", "mit jemandem sprechen",
            "mit einer person sprechen", "einen berater", "eine beraterin", "jemand vom personal",
        ),
    ),
    recall=("nochmal", "noch einmal", "vorhin", "wieder", "sie sagten"),
    secrets=Secrets(
        cues={
            "pin": ("geheimzahl",),
            "cvv": (r"(?:karten)?prüfnummer", "prüfziffer", "sicherheitscode"),
            "password": ("passwort", "kennwort"),
            "otp": (
                r"(?-i:m?TAN)", r"einmal(?:code|passwort)", r"best[äa]tigungscode\s+(?:per|aus\s+der)\s+sms",
                "verifizierungscode",
            ),
        },
        hints=("sicherheit", "prüf", "kennwort", "tan", "einmal", "geheim"),
        other_facts=("konto", "karte", "telefon"),
        joins=("oder", "und"),
        hedges=("vielleicht",),
        password_verbs=("ist", "lautet", "war"),
        not_passwords=("nicht", "falsch", "abgelaufen", "gesperrt"),
        password_replies=("ja", r"es\s+ist"),
        cards=("karte", "kreditkarte"),
        not_cards=("konto",),
        national_ids={
            "steuer_id": (
                r"steuer[\s-]?id(?:entifikationsnummer)?", r"steuerliche\s+identifikationsnummer", "identifikationsnummer",
                r"steuer[\s-]?identifikationsnummer",
            ),
        },
        id_hints=("steuer", "identifikation"),
        asks=(
            r"\bich\s+(?:benötige|brauche|bräuchte|benötigte)\b", r"\b(?:benötige|brauche|bräuchte)\s+ich\b",
            r"\b(?:nennen|geben|sagen|teilen|schicken|senden|bestätigen|übermitteln|diktieren|schreiben)\s+sie\s+(?:mir|uns)\b",
            r"\b(?:können|könnten|würden|wollen)\s+sie\s+(?:mir|uns)\b", r"\bwie\s+lautet\b",
            r"\b(?:geben|tippen)\s+sie\b",
            r"\bwas\s+ist\s+(?:ihre|ihr|deine|dein)\b", r"\b(?:ihre|ihr|die|den)\s+(?:[\w-]+\W+){0,3}?[\w-]+\W*\bbitte\W*$",
            r"^\W*(?:und|noch)?\W*(?:ihre|ihr|die)\s+(?:[\w-]+\W+){0,3}?[\w-]+\W*\?",
        ),
        clauses=("ob", "wann", "welche", "welcher", "welches", "warum", "wieso", "wo", "wer", "grund", "weil", "seit", "nachdem", "bevor"),
        pointers=(r"(?:den|diesen)\s+code",),
        warnings=(
            r"\bnie(?:mals)?\b", r"\bniemand(?:em|en)?\b", r"\bkeinesfalls\b", r"\bauf\s+keinen\s+fall\b",
            r"\bnicht\s+(?:\w+\s+){0,2}?(?:weiter|preis|heraus|mit|an|nennen|geben|sagen|fragen)\b",
            r"\b(?:am|im|in\s+der|an\s+der|über\s+die)\s+(?:geldautomaten?|terminal|kartenleser|automaten?|app|online-?banking|kasse)\b",
            r"\bper\s+(?:post|brief)\b",
        ),
    ),
    numbers=Numbers(spellings={"fuenf": "5"}),
    times=Times(ordinals=(".",), day_parts={"uhr": "24h"}),
    names=Names(
        self_cues=(r"mein\s+name\s+ist", r"ich\s+heiße", r"ich\s+heisse", r"hier\s+spricht"),
        firm_cues=(r"mein\s+(?:vollständiger\s+)?name\s+ist", r"ich\s+heiße", r"ich\s+heisse"),
        labels=(r"(?:vollständiger\s+)?name\s*(?:ist|:)",),
        label_hints=("name",),
        part_labels=("vorname", "nachname", "familienname", "rufname"),
        kin=(
            r"(?:mein(?:e[nmr]?)?|unser(?:e[nmr]?)?)\s+(?:sohn|tochter|frau|mann|partner(?:in)?|mutter|vater|bruder|"
            r"schwester|kind|enkel(?:in)?|freund(?:in)?|verlobten?)",
        ),
        holder_cues=(r"auf\s+den\s+namen(?:\s+von)?", r"unter\s+dem\s+namen"),
        reply_holders=("für", "auf"),
        introductions=(r"hier\s+ist",),
        sign_offs=(
            r"(?:viele|liebe|beste|herzliche|freundliche)\s+gr(?:ü|ue)(?:ß|ss)e", r"mit\s+freundlichen\s+gr(?:ü|ue)(?:ß|ss)en",
            r"gr(?:ü|ue)(?:ß|ss)e", r"gru(?:ß|ss)", "mfg", "lg", "vg", "danke", r"vielen\s+dank", r"danke\s+schön",
            r"danke\s+im\s+voraus", r"besten\s+dank",
        ),
        common_words=tuple(
            """
            ich mich mir mein meine meinen meiner du dich dir dein er sie es wir uns unser ihr ihre ihnen der die
            das den dem des ein eine einen einem einer und oder aber nicht kein keine nein ja doch auch noch immer
            schon nur sehr bitte danke warum wieso weshalb was wer wie wo wann welche welcher ist bin sind war
            waren habe hast hat haben hatte kann können könnte muss müssen möchte will wollen brauche brauchen
            weiß wissen sagen sage gebe geben mache machen geht gehen kommt kommen heute morgen gestern jetzt hier
            dort da dass mit zu für auf in an bei nach aus über unter um gerade leider nichts alles etwas mehr viel
            falsch richtig bezüglich betreff betreffend wegen zum zur im am vom beim ins ans seit ganz total echt
            gern gerne genau also schon mal eben jeden fall moment augenblick
            """.split()
        ),
        self_hints=("name", "heiße", "heisse", "spricht"),
        your_cues=(r"ihr\s+name\s+(?:ist|lautet)", r"sie\s+heißen"),
        your_hints=("name", "heißen"),
        here=("hier", r"mein\s+name", r"am\s+apparat"),
        here_hints=("hier", "name", "apparat"),
        greetings=("hallo", r"guten\s+(?:tag|morgen|abend)", "moin", "servus", r"gr(?:ü|ue)(?:ß|ss)\s+gott"),
        addressing=("hallo", "danke"),
        titles=("Herr", "Frau"),
        particles=("von", "der", "den"),
        after=("und", "hier", "nochmal", "wieder", "bitte", "danke", r"vielen\s+dank"),
        leads=("ja", "klar", "gerne?", "natürlich", "genau", "hallo", r"(?:ä|ae)h+m*", "hm+", "ich", "also"),
        it_is=(
            r"(?:es|das|der|er)\s+(?:ist|lautet)", r"auf(?:\s+den\s+namen)?", r"unter(?:\s+dem\s+namen)?", "mit",
        ),
        not_names=("ja", "nein", "herr", "frau", "schön", "sehr", "vielmals"),
        sentence_starts=tuple(
            """
            Ich Wir Sie Er Es Ihr Ihre Ihren Ihrem Ihrer Mein Meine Meinen Meinem Der Die Das Den Dem Ein Eine
            Bitte Danke Hallo Ja Nein Guten Wie Was Wo Wann Warum Welche Können Könnten Kann Haben Hat Ist Sind
            Gibt Heute Morgen Gestern Jetzt Leider Hier Dort Bezüglich Betreff Wegen Seit Nach Vor Mit Für
            """.split()
        ),
        not_bare=tuple(
            """
            straße strasse platz bahnhof flughafen gasse weg allee kirche klinik krankenhaus stadt
            danke bitte hallo guten tag klar gerne genau doch also moment augenblick sekunde familie team kundenservice
            """.split()
        ),
    ),
    ledger=Ledger(
        corrections=(
            "tippfehler", "vertippt", "autokorrektur",
            "entschuldigung", "sorry", "verzeihung", r"ich\s+meinte", r"ich\s+meine", "korrektur", "eigentlich",
            r"(?:nein\s+)?warte", r"(?:das\s+war\s+)?falsch", r"ich\s+habe\s+mich\s+vertan", r"genauer\s+gesagt",
            r"(?:ä|ae)hm", r"nein\s+moment", "vielmehr", r"besser\s+gesagt", r"ich\s+korrigiere",
            r"jetzt\s+(?:ist\s+(?:es|sie|er)|lautet\s+(?:sie|er|es))", r"inzwischen\s+(?:ist|lautet)",
        ),
        denials=("nein", r"nicht\s+ganz", "falsch", r"das\s+stimmt\s+nicht"),
        additions=("noch", r"weitere[snm]?", r"zweite[snm]?", "auch", r"andere[snm]?"),
        value_labels={
            "account": (
                "girokonto", "sparkonto", "tagesgeldkonto", "festgeldkonto", "geschäftskonto", "gemeinschaftskonto",
                "privatkonto", "privat", "geschäftlich", "beruflich",
            ),
            "customer_id": ("privat", "geschäftlich", "beruflich"),
            "username": ("web", "app", "online", "privat", "dienstlich"),
            "phone": (
                "handy", "mobil", "handynummer", "mobilnummer", "festnetz", "festnetznummer", "dienstlich",
                "geschäftlich", "privat", "büro", "arbeit",
            ),
            "email": ("dienstlich", "geschäftlich", "privat", "arbeit"),
            "name": ("vorname", "nachname", "familienname"),
            "address": ("privat", "geschäftlich", "lieferadresse", "rechnungsadresse"),
            "card": ("kreditkarte", "debitkarte", r"ec-?karte", "girocard"),
        },
        subjects=(
            "hotel", "restaurant", "taxi", "museum", "bank", "filiale", "geschäft", "laden", "praxis", "klinik",
            "apotheke", "flughafen", "bahnhof", "zentrale", "kino", "theater", "rezeption", "hotline",
        ),
        not_subjects=tuple(
            """
            der die das den dem des ein eine einen einem sie ihr ihre ihnen wir ich es er man dort hier unter bitte
            gerne danke ja nein nummer telefon telefonnummer rufnummer
            """.split()
        ),
    ),
    entities=Entities(
        labels={
            "reference": ("buchungs?", "reservierungs?", "bestätigungs?", "referenz"),
            "order": ("bestellung", "bestell", "auftrags?", "rechnungs?", "sendungs?"),
            "case": ("fall", "vorgangs?", "schadens?"),
            "ticket": ("ticket", "störungs", "meldungs"),
            "account": ("konto", "konten", "vertrags?", "verträge"),
            "card": ("karten",),
            "customer_id": ("kunden",),
            "member_number": ("mitglieds?",),
        },
        username_labels=("benutzername", "nutzername", "benutzerkennung", "anmeldename", "login"),
        level_labels=("mitgliedsstufe", "mitgliedschaftsstufe", "statusstufe"),
        card_words=("karte", "kreditkarte", r"ec-?karte", "girocard", "bankkarte", "debitkarte"),
        card_tails=(
            r"(?:mit\s+der\s+)?endung", r"endet\s+(?:auf|mit)", r"endend\s+(?:auf|mit)", r"(?:mit\s+den\s+)?endziffern",
            "endnummer", r"(?:die\s+)?letzten?\s+(?:vier|4)(?:\s+ziffern)?(?:\s+(?:sind|lauten))?",
        ),
        card_last=(r"letzten\s+(?:vier|4)\s+ziffern\s+(?:meiner|der|ihrer)\s+(?:\w+)?karte\s*(?:sind|lauten|:)",),
        card_ends_before=("auf", "mit"),
        card_ends=("endet", "enden", "endend"),
        levels=("bronze", "silber", "gold", "platin", "premium", "diamant", "vip"),
        level_nouns=("mitglied", "mitgliedschaft", "status", "kunde", "kundin", "stufe"),
        counts=("zwei", "drei", "vier", "beide", "beiden", "mehrere"),
        compounds=("nummer", "nr"),
        number_words=("nr", "nummer"),
        label_verbs=(r"(?:ist|lautet)(?:\s+die)?",),
        value_first=(r"(?:ist|war)\s+(?:mein(?:e|en)?|unser(?:e|en)?)",),
        articles=("die", "der", "das"),
        determiners=tuple(
            """
            ein eine einen einem einer eines der die das den dem des mein meine meinen meinem meiner meines unser
            unsere unseren unserem unserer ihr ihre ihren ihrem ihrer dein deine deinen deinem diese dieser dieses
            diesen diesem
            """.split()
        ),
        qualifiers=("für", "von", "vom", "bei", "beim", "im", "auf"),
        months=(
            ("januar", "jänner"), ("februar",), ("märz", "maerz"), ("april",), ("mai",), ("juni",), ("juli",),
            ("august",), ("september",), ("oktober",), ("november",), ("dezember",),
        ),
        ambiguous_months=("mai",),
        weekdays=(
            ("montag",), ("dienstag",), ("mittwoch",), ("donnerstag",), ("freitag",), ("samstag", "sonnabend"),
            ("sonntag",),
        ),
        phone_cues=(
            "telefon", "tel", "handy", "mobil", "mobilnummer", "rufnummer", "nummer", "erreichen", "erreichbar",
            "anrufen", "festnetz",
        ),
        number_nouns=("nummer",),
        birth_cues=("geburtsdatum", "geboren", "geburtstag"),
        address_cues=("meine adresse", "meine anschrift", "ihre adresse", "ihre anschrift"),
        address_verbs=("ist", "lautet"),
        address_joins=("und", "aber"),
        phone_words=("telefon",),
        currencies={"franken": "CHF"},
        credit=("im plus", "guthaben"),
        balance=("saldo", "kontostand"),
        balance_verbs=("ist", "beträgt"),
        percent_words=("prozent", "prozentpunkt", "prozentpunkte"),
    ),
    knowledge=KnowledgeCues(
        greetings=("hallo", r"guten\s+(?:morgen|tag|abend)", r"gruss\s+gott", "servus", "moin", r"wie\s+geht'?s"),
        thanks=("danke", r"vielen\s+dank", "dankeschon", r"auf\s+wiedersehen", "tschuss", r"das\s+war'?s", r"fur\s+ihre\s+hilfe"),
        fillers=(
            "ok", "okay", "also", "gut", "super", "prima", "toll", "schon", "ja", "genau", "und", "ah", "oh", "hm+",
            "ahm", "danke", r"alles\s+klar",
        ),
        hesitations=("a+h*m+", "o+h*m+", "e+h*m+", "h+m+"),
        questions=(
            r"(?:haben|hat|gibt|kann|konnen|darf|ist|sind|bieten|nehmen|akzeptieren)\s+(?:sie|es|ich|man|ihr|wir)",
            "was", "wann", "wo", "wie", "welche[rsnm]?", "warum", "ob",
        ),
        open_questions=("was", "wann", "wo", "wie", "welche[rsnm]?", "warum", "wieviel"),
        polar=(r"(?:haben|hat|gibt|darf|ist|sind|bieten|nehmen|akzeptieren)\s+(?:sie|es|man|ihr)", "ob"),
        actions=(
            "buchen", "reservieren", r"such(?:e|en)\s+(?:mir|uns|ein|eine|einen)", "empfehlen", "finden",
            "kaufen", "bestellen", r"(?:ich|wir)\s+(?:brauche|brauchen|mochte|mochten|will|wollen|hatte\s+gerne?)\s+(?:ein|eine|einen)",
            r"(?:gleich|(?:der|dem|die|das)?selb)e[nmrs]?\s+(?:gegend|viertel|stadtteil|bezirk|ecke)",
        ),
        procedures=(r"wie\s+(?:kann|konnen|muss|mussen|soll|sollte)\s+(?:ich|man|wir)",),
        repeats=(
            r"(?:konnen|konnten|wurden)\s+sie\s+(?:das\s+)?(?:bitte\s+)?(?:noch\s*(?:ein)?mal\s+)?wiederholen",
            r"noch\s*(?:ein)?mal\s+sagen", r"wie\s+bitte",
        ),
    ),
    replies=Replies(
        yes=("ja", "jawohl", "genau"),
        no=("nein", "leider", "leider nicht"),
        absences=("niemand", "nichts", "weder"),
        negations=("nicht", r"kein(?:e|en|em|er|es)?", "nie", "niemals"),
        contrasts=("aber", "allerdings", "außer", "ausser", "nur", "sondern", "jedoch", "solange", "sofern", "wenn"),
    ),
)
# fmt: on
