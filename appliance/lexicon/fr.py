"""French."""

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
)

# fmt: off
LEXICON = Lexicon(
    code="fr",
    requests=Requests(
        cues={
            "name": (
                "votre nom", "votre nom complet", "vos nom et prénom", "votre prénom", "comment vous appelez vous",
                "à quel nom", "a quel nom", "sous quel nom", "au nom de qui", "qui est à l'appareil",
                "à qui ai je l'honneur", "votre nom de famille", "quel nom", "vous êtes monsieur", "vous êtes madame",
            ),
            "account": ("numéro de compte", "iban", "quel compte", "numéro de contrat"),
            "card": ("numéro de carte", "quatre derniers chiffres", "4 derniers chiffres", "quelle carte"),
            "customer_id": ("numéro client", "numéro de client", "identifiant client"),
            "member_number": ("numéro d'adhérent", "numéro d'adhérente", "numéro de membre", "numéro de fidélité"),
            "member_level": (
                "niveau d'adhésion", "niveau de fidélité", "statut de membre", "niveau de membre", "quel statut",
                "quel niveau",
            ),
            "username": ("nom d'utilisateur", "identifiant", "login", "pseudo"),
            "ticket": ("numéro de ticket", "numéro du ticket", "numéro d'incident", "quel ticket"),
            "reference": ("numéro de réservation", "référence", "numéro de confirmation", "code de réservation"),
            "order": ("numéro de commande", "numéro de facture", "numéro de suivi"),
            "case": ("numéro de dossier", "numéro de réclamation"),
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
        asking=(r"s'il\s+vous\s+plaît", "pouvez", "pourriez", "donner", "indiquer"),
        pointing=("le", "la"),
        leads=("oui", r"c['’]est", r"d['’]accord", "alors", "euh"),
        plurals=("s", "x"),
        nouns={
            "name": ("nom", "prénom"), "account": ("compte",), "card": ("carte",),
            "member_number": ("membre", "adhérent", "adhérente", "abonné", "abonnée"),
            "member_level": ("membre", "adhérent", "adhérente"), "ticket": ("ticket", "incident"),
            "reference": ("réservation",), "order": ("commande",),
        },
        listeners=("votre", "vos", "ton", "ta"),
        who=(
            r"(?:^|\bet\s+|,\s*)vous\s+êtes\s*(?:\.\.\.|…)?\s*\?", r"(?:\bà|\ba|\bpour|\bau\s+nom\s+de|\bde\s+la\s+part\s+de)\s+qui\b",
            r"\bqui\s+(?:est\s+à\s+l'appareil|parle|appelle)\b",
        ),
    ),
    readback=ReadBack(
        topics={
            "birthdate": r"date\s+de\s+naissance",
            "email": r"(?:adresse\s+)?e-?mail|courriel",
            "phone": r"numero\s+de\s+(?:telephone|portable)|telephone|portable",
            "postcode": r"code\s+postal",
            "address": r"adresse",
            "customer_id": r"numero\s+(?:de\s+)?client|identifiant\s+client",
            "member_number": r"numero\s+d'adherente?|numero\s+de\s+(?:membre|fidelite)",
            "member_level": r"niveau(?:\s+d'adhesion|\s+de\s+fidelite|\s+de\s+membre)?|statut(?:\s+de\s+membre)?",
            "username": r"nom\s+d'utilisateur|identifiant|login|pseudo",
            "ticket": r"(?:numero\s+d[eu]\s+)?ticket|numero\s+d'incident",
            "card": r"numero\s+de\s+carte|carte",
            "account": r"numero\s+de\s+compte|compte|iban",
            "train": r"(?:numero\s+de\s+)?train",
            "order": r"numero\s+de\s+(?:commande|suivi|facture)|commande",
            "case": r"numero\s+de\s+(?:dossier|reclamation)|dossier",
            "reference": (
                r"(?:numero\s+de\s+)?reference|numero\s+de\s+(?:reservation|confirmation)|code\s+de\s+reservation"
            ),
            "amount": r"combien|montant|argent|somme|prix|cout|frais",
            "name": r"nom(?:\s+complet|\s+de\s+famille)?|prenom",
            "date": r"date",
            "time": r"heure",
        },
        request=(
            r"quel(?:le)?s?\s+(?:etait|etaient|est|sont)\s+(?:mon|ma|mes|notre|nos)", r"rappel(?:ez|le|er)[-\s]moi",
            r"me\s+rappeler", r"repet(?:er|ez)", "relire", "relisez",
            r"vous\s+ai[-\s]je\s+(?:donne|dit|communique|indique)", r"je\s+vous\s+ai\s+(?:donne|dit|communique|indique)",
            r"vous\s+m'avez\s+(?:donne|dit|communique)",
        ),
        again=(r"a\s+nouveau", r"de\s+nouveau", r"encore\s+une\s+fois", "encore"),
        asking=("quel(?:le)?s?", "combien", "dire", "dites", "donner", "donnez", "confirmer", "confirmez"),
        first=(r"au\s+debut", "d'abord", r"au\s+depart", "initialement", r"en\s+premier"),
        earlier=(r"plus\s+tot", r"tout\s+a\s+l'heure", "avant", "auparavant", r"precedemment"),
        labels={
            "birthdate": ("Votre date de naissance", "Les dates de naissance"),
            "email": ("Votre adresse e-mail", "Les adresses e-mail"),
            "phone": ("Votre numéro de téléphone", "Les numéros de téléphone"),
            "postcode": ("Votre code postal", "Les codes postaux"),
            "address": ("Votre adresse", "Les adresses"),
            "customer_id": ("Votre numéro client", "Les numéros client"),
            "member_number": ("Votre numéro d'adhérent", "Les numéros d'adhérent"),
            "member_level": ("Votre niveau", "Les niveaux"),
            "username": ("Votre nom d'utilisateur", "Les noms d'utilisateur"),
            "ticket": ("Votre numéro de ticket", "Les numéros de ticket"),
            "card": ("Votre carte se termine par {}.", "Vos cartes se terminent par {}."),
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
        verbs=("est", "sont"),
        conjunction="et",
    ),
    stage=StageCues(
        late=(
            "merci", "c'est tout", "ce sera tout", "rien d'autre", "tout ce dont j'ai besoin", "résolu", "réglé",
            "au revoir", "bonne journée",
        ),
        open=("?", "aussi", "également", "je voudrais", "j'aimerais", "j'ai besoin", "pouvez-vous", "pourriez-vous"),
        person=(
            "parler à quelqu'un", "parler à une personne", "un conseiller", "une conseillère", "une vraie personne",
            "un être humain", "parler à un agent", "parler à un employé",
        ),
    ),
    recall=("encore", "déjà", "tout à l'heure", "vous avez dit", "rappelez"),
    secrets=Secrets(
        cues={
            "pin": (r"code\s+pin", r"code\s+secret", r"code\s+confidentiel"),
            "cvv": (r"cryptogramme(?:\s+visuel)?", r"code\s+de\s+s[ée]curit[ée]"),
            "password": (r"mot\s+de\s+passe",),
            "otp": (r"code\s+de\s+v[ée]rification", r"code\s+[àa]\s+usage\s+unique"),
        },
        hints=("crypto", "secret", "code", "pass"),
        other_facts=("compte", "carte"),
        joins=("ou", "et"),
        hedges=("peut-être",),
        password_verbs=("est",),
        not_passwords=("pas", "incorrect", "faux", "bloqué", "expiré"),
        password_replies=(r"c\s*['’]\s*est",),
        cards=("carte",),
        not_cards=("compte",),
        national_ids={
            "nir": (
                r"num[ée]ro\s+de\s+s[ée]curit[ée]\s+sociale", r"num[ée]ro\s+de\s+s[ée]cu", r"s[ée]curit[ée]\s+sociale",
                "nir", r"num[ée]ro\s+insee",
            ),
        },
        id_hints=("sécu", "secu", "nir", "insee"),
        asks=(
            r"\b(?:pouvez|pourriez|voulez|voudriez)[\s-]vous\b", r"\bveuillez\b", r"\bj'ai\s+besoin\b",
            r"\bil\s+(?:me|nous)\s+faut\b",
            r"\b(?:me|nous)\s+(?:donner|communiquer|indiquer|fournir|confirmer|transmettre|dire|envoyer|préciser)\b",
            r"\b(?:donnez|communiquez|indiquez|fournissez|confirmez|transmettez|dites|envoyez|précisez)[\s-]?(?:moi|nous)?\b",
            r"\bquel(?:le)?\s+est\s+(?:votre|ton|ta)\b",
            r"\b(?:votre|ton|ta|le|la)\s+(?:[\w-]+\W+){0,3}?[\w-]+\W*\b(?:s'il\s+vous\s+pla[iî]t|svp)\W*$",
            r"^\W*(?:et)?\W*(?:votre|ton|ta)\s+(?:[\w-]+\W+){0,3}?[\w-]+\W*\?",
        ),
        clauses=("si", "quand", "pourquoi", "comment", "où", "qui", "raison", "parce", "depuis", "après", "avant"),
        pointers=(r"(?:le|ce)\s+code",),
        warnings=(
            r"\bjamais\b", r"\bpersonne\b", r"\baucun(?:e)?\b", r"\bne\s+(?:[\w']+\s+){0,3}?pas\b", r"\bn'[\w]+\s+pas\b",
            r"\b(?:au|sur\s+le|dans\s+l'|dans\s+votre|sur\s+votre)\s*(?:terminal|distributeur|guichet\s+automatique|"
            r"application|appli|espace\s+client)\b",
            r"\bpar\s+(?:courrier|la\s+poste)\b",
        ),
    ),
    numbers=Numbers(
        digits=(
            ("zéro", "zero"), ("un", "une"), ("deux",), ("trois",), ("quatre",), ("cinq",), ("six",), ("sept",),
            ("huit",), ("neuf",),
        ),
    ),
    names=Names(
        self_cues=(r"je\s+m\s*['’]\s*appelle", r"je\s+suis", r"mon\s+nom\s+est"),
        firm_cues=(r"je\s+m\s*['’]\s*appelle", r"mon\s+(?:nom|nom\s+complet)\s+(?:est|c\s*['’]\s*est)"),
        labels=(r"nom(?:\s+complet)?\s*(?:est|:)",),
        label_hints=("nom",),
        part_labels=("prénom", r"nom\s+de\s+famille"),
        kin=(r"(?:mon|ma|notre)\s+(?:fils|fille|femme|mari|compagne?|mère|père|frère|sœur|soeur|enfant|conjointe?)",),
        holder_cues=(r"au\s+nom\s+de",),
        reply_holders=("pour",),
        introductions=("ici", r"c\s*['’]\s*est", r"moi\s*,?\s*c\s*['’]\s*est"),
        sign_offs=(
            "cordialement", r"bien\s+(?:cordialement|à\s+vous)", r"salutations(?:\s+distinguées)?", "amicalement",
            "merci", r"merci\s+beaucoup", r"bonne\s+journée", r"merci\s+d\s*['’]\s*avance", r"bonne\s+soirée",
        ),
        common_words=tuple(
            """
            je j' me m' moi mon ma mes tu te toi ton ta tes il elle on nous vous ils elles le la les l' un une des
            du de et ou mais ne pas plus rien non oui si que qui quoi quel quelle pourquoi comment où quand est
            suis es sommes êtes sont était ai as avons avez ont avait veux voudrais peux pouvez préfère dois faut
            sais savoir dire dis donne merci bonjour aujourd'hui demain hier maintenant ici là très bien aussi
            encore déjà avec sans pour par dans sur sous chez ça cela ce cette c'est bonne journée soirée à au aux
            en y depuis vraiment trop assez pardon désolé désolée excusez svp stp concernant suite tout tous
            toute instant moment
            """.split()
        ),
        self_hints=("appelle", "je suis", "nom"),
        your_cues=(r"votre\s+nom\s+est", r"vous\s+vous\s+appelez"),
        your_hints=("nom", "appelez"),
        here=("ici", r"à\s+l\s*['’]\s*appareil"),
        here_hints=("ici", "appareil"),
        greetings=("bonjour", "bonsoir", "salut", "allô", "allo"),
        addressing=("bonjour", "merci"),
        titles=("Mme", "Mlle", "Monsieur", "Madame"),
        particles=("de", "du", "la", "le"),
        after=("et", "ici", "encore", "merci", r"s\s*['’]\s*il\s+vous\s+pla[iî]t", "svp", "stp"),
        leads=("oui", r"bien\s+s[uû]r", r"d['’]accord", "alors", "euh+", "bah", "bonjour", "moi"),
        it_is=(r"c\s*['’]\s*est", r"au\s+nom\s+de"),
        not_names=("oui", "non", "mme", "mlle", "monsieur", "madame", "beaucoup", "infiniment", "bien"),
        sentence_starts=tuple(
            """
            Je Vous Nous Il Elle On Le Les Un Une Mon Ma Mes Votre Vos Notre Bonjour Bonsoir Merci Oui Non
            Pourquoi Comment Quand Où Quel Quelle Est Pouvez Pourriez Depuis Hier Demain Aujourd'hui Concernant
            """.split()
        ),
        word_forms=(r"[^\W\d_]{4,}ment",),
        not_bare=tuple(
            "rue gare aéroport hôtel banque merci bonjour bonsoir salut oui instant seconde moment famille équipe".split()
        ),
    ),
    ledger=Ledger(
        corrections=(
            r"faute\s+de\s+frappe", "coquille", r"correcteur(?:\s+automatique)?",
            "pardon", r"désolée?", r"je\s+me\s+suis\s+trompée?", r"je\s+voulais\s+dire", "correction", r"en\s+fait",
            "plutôt", r"non\s+attendez", "erreur", r"non\s+pardon", "enfin", r"je\s+veux\s+dire", r"je\s+rectifie",
            "rectification", r"maintenant\s+c\s*['’]\s*est", r"désormais\s+c\s*['’]\s*est",
        ),
        denials=("non", r"ce\s+n\s*['’]\s*est\s+pas\s+(?:ça|correct|bon)", "faux"),
        additions=("autre", "aussi", "deuxième", "second"),
        value_labels={
            "account": (
                "courant", "épargne", "joint", "commun", "professionnel", "livret", "maison", "pro", r"perso(?:nnel)?",
                "privé", "entreprise",
            ),
            "customer_id": ("pro", "professionnel", r"perso(?:nnel)?", "privé"),
            "username": ("web", "application", "appli", "app", "site"),
            "phone": (
                "portable", "mobile", "fixe", "domicile", "travail", "bureau", "professionnel", r"perso(?:nnel)?",
            ),
            "email": ("professionnel", r"perso(?:nnel)?", "travail"),
            "name": ("prénom", r"nom\s+de\s+famille"),
            "address": ("domicile", "livraison", "facturation", "travail"),
            "card": ("débit", "crédit", "visa", "mastercard"),
        },
        subjects=(
            "hôtel", "restaurant", "taxi", "musée", "banque", "agence", "magasin", "boutique", "cabinet", "clinique",
            "pharmacie", "aéroport", "gare", "cinéma", "théâtre", "réception", "standard",
        ),
        not_subjects=tuple("le la les l un une des leur leurs son sa ses vous nous je il elle on merci oui non".split()),
    ),
    entities=Entities(
        labels={
            "reference": ("référence", "réservation"),
            "order": ("commande", "facture"),
            "case": ("dossier", "sinistre", "réclamation"),
            "ticket": ("ticket", "incident"),
            "account": ("compte", "contrat"),
            "card": ("carte",),
            "customer_id": ("client",),
            "member_number": (r"adhérente?", "membre", "fidélité"),
        },
        username_labels=(r"nom\s+d\s*['’]\s*utilisateur", "identifiant", "login", "pseudo"),
        level_labels=(r"niveau\s+(?:d\s*['’]\s*adhésion|de\s+fidélité|de\s+membre)", r"statut\s+de\s+membre"),
        card_words=("carte", r"carte\s+bancaire", r"carte\s+de\s+crédit", r"carte\s+bleue", "cb", "visa", "mastercard"),
        card_tails=(
            r"se\s+terminant\s+par", r"(?:qui\s+)?se\s+termine\s+par", r"(?:qui\s+)?termine\s+par",
            r"(?:qui\s+)?finit\s+par", r"finissant\s+par",
            r"(?:les\s+)?(?:quatre|4)\s+derniers(?:\s+chiffres)?(?:\s+sont)?",
        ),
        card_last=(r"(?:quatre|4)\s+derniers\s+chiffres\s+de\s+(?:ma|la|votre)\s+carte\s*(?:sont|:)",),
        levels=("bronze", "argent", "or", "platine", "premium", "gold", "silver", "diamant", "vip"),
        level_nouns=("membre", r"adhérente?", r"cliente?", "statut", "niveau", "abonnement"),
        counts=("deux", "trois", "quatre", "plusieurs"),
        number_words=("numéro", "numero", "num", "no"),
        label_verbs=(r"c\s*['’]\s*est(?:\s+le)?", r"est(?:\s+le)?"),
        value_first=(r"(?:est|c\s*['’]\s*est|c\s*['’]\s*était)\s+(?:mon|ma|notre)",),
        articles=("le", "la"),
        determiners=tuple("un une le la les l mon ma mes notre nos votre vos ce cet cette ces son sa ses leur".split()),
        qualifiers=("de", "du", "des", r"d\s*['’]", "pour", "sur", "chez"),
        months=(
            ("janvier",), ("février", "fevrier"), ("mars",), ("avril",), ("mai",), ("juin",), ("juillet",),
            ("août", "aout"), ("septembre",), ("octobre",), ("novembre",), ("décembre", "decembre"),
        ),
        ambiguous_months=("mai",),
        weekdays=(("lundi",), ("mardi",), ("mercredi",), ("jeudi",), ("vendredi",), ("samedi",), ("dimanche",)),
        day_of=("de",),
        phone_cues=(
            "téléphone", r"t[ée]l", "portable", "mobile", "fixe", "numéro", "joindre", "appeler", "rappeler",
        ),
        number_nouns=("numéro",),
        birth_cues=(r"date\s+de\s+naissance", r"n[ée]e?\s+le"),
        address_cues=(r"mon\s+adresse", r"votre\s+adresse"),
        address_verbs=("est",),
        address_joins=("et",),
        credit=(r"de\s+cr[ée]dit",),
        balance=("solde",),
        balance_verbs=("est",),
        percent_words=(r"pour\s?cent", r"points?\s+de\s+pourcentage"),
    ),
    knowledge=KnowledgeCues(
        greetings=("bonjour", "bonsoir", "salut", r"comment\s+allez[- ]vous", r"enchante(?:e)?"),
        thanks=("merci", r"merci\s+beaucoup", r"au\s+revoir", r"bonne\s+journee", r"c'?est\s+tout", r"pour\s+votre\s+aide"),
        fillers=("ok", "d'accord", "bon", "bien", "super", "parfait", "oui", "alors", "et", "euh", "ah", "oh", "merci"),
        hesitations=("euh+", "heu+", "hum+", "bah"),
        questions=(
            r"est[- ]ce\s+que?", r"y\s+a[- ]t[- ]il", r"qu'?est[- ]ce", r"(?:avez|pouvez|acceptez|faites|proposez)[- ]vous",
            "quel(?:le)?s?", "quand", "ou", "comment", "combien", "pourquoi", "si",
        ),
        open_questions=("quel(?:le)?s?", "quand", "ou", "comment", "combien", "pourquoi", r"qu'?est[- ]ce"),
        polar=(r"est[- ]ce\s+que?", r"y\s+a[- ]t[- ]il", r"(?:avez|acceptez|faites|proposez)[- ]vous"),
        actions=(
            "reserver", r"trouve[rz]?\s+(?:moi|nous|un|une)", "recommander", "conseiller", "chercher",
            r"meme\s+(?:quartier|coin|secteur|zone|arrondissement)",
        ),
        procedures=(r"comment\s+(?:puis\s+je|je\s+peux|peut\s+on|on\s+peut|faire|faut\s+il|est\s+ce\s+qu)",),
        repeats=(r"(?:pouvez|pourriez)\s+vous\s+(?:le\s+)?(?:me\s+le\s+)?repeter", r"repetez", r"vous\s+pouvez\s+repeter"),
    ),
    replies=Replies(
        yes=("oui", "tout à fait"),
        negations=(r"n(?:e\s+|['’])(?:\S+\s+){0,2}?(?:pas|plus|jamais|point)",),
        contrasts=("mais", "sauf", "seulement", "uniquement", "cependant", "toutefois", "tant que", "si"),
    ),
)
# fmt: on
