"""Spanish."""

from appliance.lexicon.schema import (
    Entities,
    KnowledgeCues,
    Ledger,
    Lexicon,
    Names,
    ReadBack,
    Replies,
    Requests,
    Secrets,
    StageCues,
    Times,
)

# fmt: off
LEXICON = Lexicon(
    code="es",
    regions=("ES", "MX"),
    requests=Requests(
        cues={
            "name": (
                "su nombre", "tu nombre", "su nombre completo", "cómo se llama", "cómo te llamas", "nombre y apellido",
                "a nombre de quién", "a qué nombre", "a nombre de", "con quién hablo", "con quién tengo el gusto",
                "su apellido", "sus apellidos", "qué nombre", "su nombre de pila",
                "usted es el señor", "usted es la señora",
            ),
            "account": ("número de cuenta", "iban", "qué cuenta", "número de contrato"),
            "card": ("número de tarjeta", "últimos cuatro dígitos", "últimos 4 dígitos", "qué tarjeta", "cuál tarjeta"),
            "customer_id": ("número de cliente", "id de cliente", "identificador de cliente"),
            "member_number": (
                "número de socio", "número de socia", "número de miembro", "número de afiliado", "número de afiliada",
            ),
            "member_level": (
                "nivel de socio", "nivel de membresía", "categoría de socio", "qué nivel", "qué categoría",
            ),
            "username": ("nombre de usuario", "usuario", "login"),
            "ticket": (
                "número de ticket", "número del ticket", "número de incidencia", "número de incidente", "qué ticket",
            ),
            "reference": (
                "número de reserva", "número de referencia", "código de reserva", "número de confirmación",
                "localizador",
            ),
            "order": ("número de pedido", "número de factura", "número de seguimiento"),
            "case": ("número de caso", "número de reclamación"),
            "birthdate": ("fecha de nacimiento",),
            "phone": ("número de teléfono", "teléfono", "número de móvil", "celular"),
            "email": (
                "correo electrónico", "correo", "email", "e mail", "dirección de correo electrónico",
                "dirección de correo", "dirección de email",
            ),
            "postcode": ("código postal",),
            "address": ("dirección", "su dirección", "domicilio"),
            "pin": ("pin", "número secreto", "clave"),
            "cvv": ("código de seguridad", "cvv"),
            "password": ("contraseña",),
            "otp": ("código de verificación", "código de un solo uso", "código que le enviamos", "código sms"),
            "open": ("en qué puedo ayudarle", "en qué le puedo ayudar", "cómo puedo ayudarle", "en qué puedo ayudarte"),
        },
        asking=(r"por\s+favor", "puede", "podría", "necesito", "indicar"),
        pointing=("lo", "la", "le"),
        leads=("s[ií]", "claro", "vale", "bueno", "pues", "es"),
        plurals=("s", "es"),
        nouns={
            "name": ("nombre", "apellido"), "account": ("cuenta",), "card": ("tarjeta",),
            "member_number": ("socio", "socia", "miembro"), "member_level": ("socio", "socia", "miembro"),
            "ticket": ("ticket", "incidencia"), "reference": ("reserva",), "order": ("pedido",),
        },
        listeners=("su", "sus", "tu", "tus"),
        who=(
            r"\b(?:a\s+nombre\s+de|para|con|de\s+parte\s+de)\s+quién\b", r"\bquién\s+(?:habla|llama|es\s+usted)\b",
            r"(?:^|¿|\by\s+|,\s*)usted\s+es\s*(?:\.\.\.|…)?\s*\?",
        ),
    ),
    readback=ReadBack(
        topics={
            "birthdate": r"fecha\s+de\s+nacimiento|cumpleanos",
            "email": r"correo(?:\s+electronico)?|e-?mail",
            "phone": r"numero\s+de\s+(?:telefono|movil|celular)|telefono|movil|celular",
            "postcode": r"codigo\s+postal",
            "address": r"direccion|domicilio",
            "customer_id": r"numero\s+de\s+cliente|id\s+de\s+cliente",
            "member_number": r"numero\s+de\s+(?:soci[oa]|miembro|afiliad[oa])",
            "member_level": r"nivel(?:\s+de\s+(?:socio|membresia))?|categoria",
            "username": r"nombre\s+de\s+usuario|usuario|login",
            "ticket": r"(?:numero\s+del?\s+)?(?:ticket|incidencia|incidente)",
            "card": r"numero\s+de\s+tarjeta|tarjeta",
            "account": r"numero\s+de\s+cuenta|cuenta|iban",
            "train": r"(?:numero\s+de\s+)?tren",
            "order": r"numero\s+de\s+(?:pedido|seguimiento|factura)|pedido",
            "case": r"numero\s+de\s+(?:caso|reclamacion)",
            "reference": (
                r"(?:numero\s+de\s+)?referencia|(?:numero|codigo)\s+de\s+(?:reserva|confirmacion)|localizador"
            ),
            "amount": r"cuanto|importe|cantidad|dinero|suma|precio|coste|costo|tarifa",
            "name": r"nombre(?:\s+completo)?|apellidos?",
            "date": r"fecha",
            "time": r"hora",
        },
        request=(
            r"cual\s+(?:era|es|fue)n?\s+(?:mi|mis|nuestro|nuestra)", r"me\s+(?:recuerda|puede\s+recordar)",
            "recuerdame", "recordarme", "repetir(?:me)?", "repita(?:me)?", "repiteme", "leerme", "leame",
            r"(?:le|te|les)\s+(?:di|dije|facilite|indique)", r"me\s+(?:dio|diste|dijo|dijiste)",
        ),
        again=(r"de\s+nuevo", r"otra\s+vez", "nuevamente"),
        asking=("cual(?:es)?", "que", "cuanto", "decir", "dime", "digame", "dar", "confirmar", "confirme"),
        first=(
            r"al\s+principio", r"al\s+comienzo", r"al\s+inicio", "primero", "inicialmente", "originalmente",
        ),
        earlier=("antes", r"hace\s+un\s+rato", "anteriormente", r"previamente"),
        labels={
            "birthdate": ("Su fecha de nacimiento", "Las fechas de nacimiento"),
            "email": ("Su correo electrónico", "Los correos electrónicos"),
            "phone": ("Su número de teléfono", "Los números de teléfono"),
            "postcode": ("Su código postal", "Los códigos postales"),
            "address": ("Su dirección", "Las direcciones"),
            "customer_id": ("Su número de cliente", "Los números de cliente"),
            "member_number": ("Su número de socio", "Los números de socio"),
            "member_level": ("Su nivel", "Los niveles"),
            "username": ("Su nombre de usuario", "Los nombres de usuario"),
            "ticket": ("Su número de ticket", "Los números de ticket"),
            "card": ("Su tarjeta termina en {}.", "Sus tarjetas terminan en {}."),
            "account": ("Su número de cuenta", "Los números de cuenta"),
            "train": ("El tren", "Los trenes"),
            "order": ("Su número de pedido", "Los números de pedido"),
            "case": ("Su número de caso", "Los números de caso"),
            "reference": ("Su referencia", "Las referencias"),
            "amount": ("El importe", "Los importes"),
            "name": ("Su nombre", "Los nombres"),
            "date": ("La fecha", "Las fechas"),
            "time": ("La hora", "Las horas"),
        },
        verbs=("es", "son"),
        conjunction="y",
    ),
    stage=StageCues(
        late=(
            "gracias", "eso es todo", "nada más", "todo lo que necesito", "resuelto", "adiós", "hasta luego",
            "buen día",
        ),
        open=("?", "también", "quisiera", "me gustaría", "necesito", "puede", "podría"),
        person=(
            "hablar con alguien", "hablar con una persona", "una persona real", "un ser humano",
            "hablar con un empleado", "hablar con un asesor", "hablar con una asesora", "hablar con un agente",
        ),
    ),
    recall=("otra vez", "de nuevo", "antes", "dijiste", "recuérdame"),
    secrets=Secrets(
        cues={
            "pin": (r"n[uú]mero\s+secreto", r"clave\s+(?:secreta|personal)"),
            "cvv": (r"c[oó]digo\s+de\s+seguridad",),
            "password": ("contrase[nñ]a",),
            "otp": (r"c[oó]digo\s+de\s+verificaci[oó]n",),
        },
        hints=("digo", "contrase", "clave", "secret"),
        other_facts=("cuenta", "tarjeta"),
        joins=("o", "y"),
        hedges=("quizás",),
        password_verbs=("es",),
        not_passwords=("incorrecta", "bloqueada"),
        password_replies=("es",),
        cards=("tarjeta",),
        not_cards=("cuenta",),
        national_ids={
            "dni": (
                "dni", "nie", "nif", r"documento\s+(?:nacional\s+)?de\s+identidad", r"n[úu]mero\s+de\s+identidad",
            ),
        },
        id_hints=("dni", "nie", "nif", "identidad"),
        asks=(
            r"\b(?:puede|podría|podria|puedes|podrías)\s+(?:usted\s+)?(?:darme|decirme|indicarme|facilitarme|"
            r"proporcionarme|confirmarme|enviarme|dictarme|dar|decir|indicar|facilitar|proporcionar|confirmar)\b",
            r"\bme\s+(?:puede|podría|podria|puedes)\b", r"\bnecesito\b", r"\bnecesitamos\b",
            r"\b(?:indíqueme|dígame|facilíteme|proporcióneme|confírmeme|envíeme|díctame|dime|dame|indícame)\b",
            r"\b(?:cuál|cual)\s+es\s+(?:su|tu)\b",
            r"\b(?:su|tu|el|la)\s+(?:[\w-]+\W+){0,3}?[\w-]+\W*\bpor\s+favor\W*$",
            r"^\W*(?:y)?\W*(?:su|tu)\s+(?:[\w-]+\W+){0,3}?[\w-]+\W*\?",
        ),
        clauses=("si", "cuándo", "cuando", "cómo", "dónde", "quién", "motivo", "razón", "porque", "desde", "después", "antes"),
        pointers=(r"(?:el|ese|este)\s+c[óo]digo",),
        warnings=(
            r"\bnunca\b", r"\bjam[aá]s\b", r"\bnadie\b",
            r"\bno\s+(?:se\s+los?\s+|lo\s+|la\s+|le\s+)?(?:\w+\s+){0,1}?(?:comparta|compartas|dé|des|facilite|revele|"
            r"diga|digas|pediremos|pedimos|solicitaremos|solicitamos|necesitamos|necesito)\b",
            r"\ben\s+(?:el|la|nuestra|su)\s+(?:cajero|terminal|datáfono|datafono|app|aplicación|banca\s+online)\b",
            r"\bpor\s+correo\b",
        ),
    ),
    times=Times(ordinals=("º", "°")),
    names=Names(
        self_cues=(r"me\s+llamo", r"mi\s+nombre\s+es", "soy"),
        firm_cues=(r"me\s+llamo", r"mi\s+nombre\s+(?:completo\s+)?es"),
        labels=(r"nombre(?:\s+completo)?\s*(?:es|:)",),
        label_hints=("nombre",),
        part_labels=(r"apellidos?", r"nombre\s+de\s+pila"),
        kin=(r"(?:mi|nuestr[oa])\s+(?:hij[oa]|espos[oa]|marido|mujer|pareja|madre|padre|herman[oa]|niet[oa])",),
        holder_cues=(r"a\s+nombre\s+de",),
        reply_holders=("para",),
        introductions=(r"le\s+habla",),
        sign_offs=(
            "saludos", r"un\s+saludo", "atentamente", "cordialmente", "gracias", r"muchas\s+gracias", r"un\s+abrazo",
            r"gracias\s+de\s+antemano", r"un\s+cordial\s+saludo",
        ),
        common_words=tuple(
            """
            yo me mi mis tú te ti tu tus él ella usted nosotros vosotros ellos ellas le les lo la los las un una
            unos unas el de del y o pero no sí si que qué quién cómo dónde cuándo cuál por porque para con sin en
            es soy eres somos son era fue he ha han tengo tiene quiero quisiera puedo puede prefiero necesito sé
            saber decir decirlo digo doy gracias hola hoy mañana ayer ahora aquí allí muy bien también todavía ya
            nada todo algo más muchas perdón perdone perdona disculpe disculpa siento para desde hace hasta sobre
            entre según muy bastante súper vale bueno pues al acuerdo momento momentito
            """.split()
        ),
        self_hints=("llamo", "nombre", "soy"),
        your_cues=(r"su\s+nombre\s+es", r"usted\s+se\s+llama", r"te\s+llamas"),
        your_hints=("nombre", "llama"),
        here=("aquí", r"al\s+habla"),
        here_hints=("aquí", "habla"),
        greetings=("hola", r"buenos\s+d[ií]as", r"buenas(?:\s+(?:tardes|noches))?"),
        addressing=("hola", "gracias"),
        titles=("Sr", "Sra", "Srta", "Señor", "Señora"),
        particles=("de", "del", "la", "los", "las"),
        after=("y", r"otra\s+vez", r"de\s+nuevo", "gracias", r"por\s+favor"),
        leads=("s[ií]", "claro", "vale", "bueno", "pues", "hola", "eh+", "este", "yo"),
        it_is=("es", r"(?:est[aá]\s+)?a\s+nombre\s+de", "con"),
        not_names=("si", "sí", "sr", "sra", "srta", "señor", "señora", "mil"),
        sentence_starts=tuple(
            """
            Yo Usted Ustedes Mi Mis Su Sus Los Las Un Una Hola Gracias Sí No Por Para Cómo Cuándo Dónde Qué
            Cuál Puede Pueden Podría Tengo Tiene Quiero Necesito Hoy Mañana Ayer Desde Sobre
            """.split()
        ),
        word_forms=(r"[^\W\d_]{4,}mente",),
        not_bare=tuple(
            "calle estación aeropuerto banco avenida gracias hola vale claro bueno momento segundo familia equipo".split()
        ),
    ),
    ledger=Ledger(
        corrections=(
            r"error\s+de\s+(?:tipeo|escritura)", "errata", "autocorrector",
            "perdón", "perdona", r"disculpe?", r"lo\s+siento", r"quise\s+decir", r"quería\s+decir", "corrección",
            r"en\s+realidad", r"me\s+equivoqué", r"no\s+espere?", r"mejor\s+dicho", "digo", r"o\s+sea", r"más\s+bien",
            "rectifico", r"ahora\s+es",
        ),
        denials=("no", r"no\s+es\s+(?:correcto|así)", "incorrecto"),
        additions=(r"otra?", "también", r"segund[ao]"),
        value_labels={
            "account": ("corriente", r"ahorros?", "nómina", "conjunta", "empresa", "negocio", "personal", "privada"),
            "customer_id": ("personal", "empresa", "particular"),
            "username": ("web", "app", "aplicación"),
            "phone": ("móvil", "celular", "fijo", "casa", "trabajo", "oficina"),
            "email": ("trabajo", "personal"),
            "name": (r"apellidos?", r"nombre\s+de\s+pila"),
            "address": ("casa", "trabajo", "envío", "facturación"),
            "card": ("débito", "crédito", "visa"),
        },
        subjects=(
            "hotel", "restaurante", "taxi", "museo", "banco", "sucursal", "oficina", "tienda", "clínica", "farmacia",
            "aeropuerto", "estación", "cine", "teatro", "recepción", "centralita",
        ),
        not_subjects=tuple("el la los las un una su sus usted ustedes nosotros yo él ella gracias sí no".split()),
    ),
    entities=Entities(
        labels={
            "reference": ("reserva",),
            "order": ("pedido", "factura"),
            "case": ("caso", "siniestro", r"reclamaci[oó]n"),
            "ticket": ("ticket", "incidencia", "incidente"),
            "account": ("cuenta", "contrato"),
            "card": ("tarjeta",),
            "customer_id": ("cliente",),
            "member_number": (r"soci[oa]", "miembro", r"afiliad[oa]"),
        },
        username_labels=(r"nombre\s+de\s+usuario", "usuario", "login"),
        level_labels=(r"nivel\s+de\s+(?:socio|membresía|miembro)", r"categoría\s+de\s+socio"),
        card_words=("tarjeta", "visa", "mastercard"),
        card_tails=(
            r"terminada\s+en", r"(?:que\s+)?termina\s+en", r"acabada\s+en", r"(?:que\s+)?acaba\s+en",
            r"(?:los\s+)?[uú]ltimos\s+(?:cuatro|4)(?:\s+d[ií]gitos)?(?:\s+son)?",
        ),
        card_last=(r"últimos\s+(?:cuatro|4)\s+dígitos\s+de\s+(?:mi|la|su)\s+tarjeta\s*(?:son|:)",),
        levels=("bronce", "plata", "oro", "platino", "premium", "diamante", "vip", "gold"),
        level_nouns=("socio", "socia", "miembro", "cliente", "nivel", "categoría", "estatus"),
        counts=("dos", "tres", "cuatro", "varias", "varios", "ambas", "ambos"),
        number_words=("número", "numero", r"n[uú]m", "nro"),
        label_verbs=(r"es(?:\s+el)?",),
        value_first=(r"(?:es|era)\s+(?:mi|nuestro|nuestra)",),
        articles=("el", "la"),
        determiners=tuple(
            "un una unos unas el la los las mi mis tu tus su sus nuestro nuestra nuestros nuestras este esta ese esa".split()
        ),
        qualifiers=("de", "del", "para", "en"),
        months=(
            ("enero",), ("febrero",), ("marzo",), ("abril",), ("mayo",), ("junio",), ("julio",), ("agosto",),
            ("septiembre",), ("octubre",), ("noviembre",), ("diciembre",),
        ),
        weekdays=(
            ("lunes",), ("martes",), ("miércoles", "miercoles"), ("jueves",), ("viernes",), ("sábado", "sabado"),
            ("domingo",),
        ),
        day_of=("de",),
        phone_cues=(
            "teléfono", "móvil", "movil", "celular", "fijo", "número", "llamar", "llame", "llámeme", "llameme",
            "llamen", "llámenme", "llamenme",
        ),
        number_nouns=("número",),
        birth_cues=("fecha de nacimiento", "nacida", "nacido"),
        address_cues=("mi direccion", "mi dirección", "su direccion", "su dirección"),
        address_verbs=("es",),
        address_joins=("y",),
        credit=("de saldo",),
        balance=("saldo",),
        balance_verbs=("es",),
        percent_words=("por ciento", "punto porcentual", "puntos porcentuales"),
    ),
    knowledge=KnowledgeCues(
        greetings=("hola", r"buen(?:os|as)\s+(?:dias|tardes|noches)", r"que\s+tal", r"como\s+esta(?:s)?"),
        thanks=("gracias", r"muchas\s+gracias", "adios", r"hasta\s+luego", r"eso\s+es\s+todo", r"por\s+su\s+ayuda"),
        fillers=("ok", "vale", "bueno", "bien", "perfecto", "genial", "si", "pues", "y", "eh", "ah", "oh", "gracias"),
        hesitations=("e+h+m*", "mm+h*"),
        questions=(
            r"(?:tienen|tiene|hay|puedo|puede|pueden|aceptan|acepta|ofrecen|ofrece)",
            "que", "cuando", "donde", "como", "cual(?:es)?", "cuanto", "cuanta", r"por\s+que", "si",
        ),
        open_questions=("que", "cuando", "donde", "como", "cual(?:es)?", "cuanto", "cuanta", r"por\s+que"),
        polar=(r"(?:tienen|tiene|hay|aceptan|acepta|ofrecen|ofrece)",),
        actions=(
            "reservar", r"busc(?:o|ar|ame)", "recomendar", "recomienda", r"encontrar(?:me)?",
            "comprar", r"pedir\s+(?:un|una|unos|unas)", r"(?:necesito|necesitamos|quiero|queremos|quisiera)\s+(?:un|una)",
            r"mism[oa]\s+(?:zona|area|barrio|sector|distrito|vecindario)",
        ),
        procedures=(r"como\s+(?:puedo|se\s+puede|hago|podemos|tengo\s+que|se\s+hace)",),
        repeats=(r"(?:puede|podria|puedes|podrias)\s+(?:me\s+lo\s+)?repetir(?:lo|melo)?", r"repita(?:lo|melo)?", r"me\s+lo\s+repite"),
    ),
    replies=Replies(
        yes=("sí", "si", "claro"),
        no=("no", "lamentablemente", "desafortunadamente", "lo siento"),
        absences=("ningún", "ninguno", "ninguna", "nadie", "nada", "ni"),
        negations=(r"no\s+(?:se\s+|lo\s+|la\s+|los\s+|las\s+|le\s+|les\s+|nos\s+)?\w+", "nunca", "tampoco"),
        contrasts=("pero", "excepto", "salvo", "solo", "sólo", "solamente", "aunque", "siempre que", "mientras"),
    ),
)
# fmt: on
