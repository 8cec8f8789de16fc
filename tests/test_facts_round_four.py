"""Facts as customers type them, round four (issue 26): mechanisms that depend less on the exact
words, each in the built-in languages with positives and negatives. The cases are new wordings, not
the blind table's."""

from __future__ import annotations

import pytest

from appliance.facts.ledger import superseded

from .said import SCORED, agent, customer, facts, ledger


class TestLettersOfAnyScript:
    """A name's words in any letters, with a short lower-case prefix joined to a capitalised part
    ("al-Sayed") and accents the common words of a language lack ("Văn" is not Dutch "van")."""

    @pytest.mark.parametrize(
        ("text", "name"),
        [
            ("my name is Ayşe Yılmaz and I need help", "Ayşe Yılmaz"),
            ("Hello, this is Ahmed al-Sayed, my order is late", "Ahmed al-Sayed"),
            ("I'm Jae-won Park, booking a lesson", "Jae-won Park"),
            ("my name is Seán O'Halloran", "Seán O'Halloran"),
        ],
    )
    def test_after_a_cue(self, text: str, name: str):
        assert facts(customer(text)) == [("name", name)]

    @pytest.mark.parametrize(
        ("asked", "reply", "name"),
        [
            ("Could I have your name?", "yeah it's Nguyễn Văn An", "Nguyễn Văn An"),
            ("Wie ist Ihr Name?", "das ist Özlem Şahin", "Özlem Şahin"),
            ("Quel est votre nom ?", "c'est Zoé Lefèvre", "Zoé Lefèvre"),
            ("¿Cuál es su nombre?", "es Íñigo Martínez", "Íñigo Martínez"),
            ("Wat is uw naam?", "Sanne de Vries", "Sanne de Vries"),
        ],
    )
    def test_in_reply_to_a_request(self, asked: str, reply: str, name: str):
        assert facts(agent(asked), customer(reply)) == [("name", name)]

    @pytest.mark.parametrize(
        "text",
        ["we are al-right thanks, just checking the hours", "het is van de week gebeurd", "está roto el candado"],
    )
    def test_no_name(self, text: str):
        assert facts(customer(text)) == []


class TestTheNounOfAKindInAQuestionIsTheRequest:
    """An agent's question that names a kind's noun asks for it, whatever the wording around it."""

    @pytest.mark.parametrize(
        ("asked", "reply", "name"),
        [
            ("ok, and the name?", "sure its Tomasz Łęcki", "Tomasz Łęcki"),
            ("can u send ur name pls", "yeah it's Kofi Boateng", "Kofi Boateng"),
            ("what name is the booking under?", "Siobhán O'Halloran", "Siobhán O'Halloran"),
            ("Ihr Name?", "das ist Özlem Şahin", "Özlem Şahin"),
            ("Votre nom ?", "c'est Zoé Lefèvre", "Zoé Lefèvre"),
            ("¿Su nombre?", "es Íñigo Martínez", "Íñigo Martínez"),
            ("Uw naam?", "Sanne de Vries", "Sanne de Vries"),
            ("what's the name on the card?", "Helen Brooks", "Helen Brooks"),
        ],
    )
    def test_a_name(self, asked: str, reply: str, name: str):
        assert facts(agent(asked), customer(reply)) == [("name", name)]

    @pytest.mark.parametrize(
        ("asked", "reply", "fact"),
        [
            ("and your membership?", "M-448210", ("member_number", "M-448210")),
            ("Ihre Mitgliedschaft?", "M-448210", ("member_number", "M-448210")),
            ("which account?", "55012398", ("account", "55012398")),
            ("votre compte ?", "55012398", ("account", "55012398")),
        ],
    )
    def test_another_kind(self, asked: str, reply: str, fact: tuple[str, str]):
        assert facts(agent(asked), customer(reply)) == [fact]

    @pytest.mark.parametrize(
        ("asked", "reply"),
        [
            ("what's your company name?", "Blue Harbour"),
            ("what is the name of the hotel?", "Grand Palace"),
            ("what's your pet's name?", "Biscuit"),
            ("Wie ist der Name der Straße?", "Lindenweg"),
            ("Quel est le nom de votre chien ?", "Rex"),
            ("¿Cuál es el nombre de la calle?", "Gran Vía"),
            ("Wat is de naam van het hotel?", "Zeezicht"),
        ],
    )
    def test_the_name_of_something_else(self, asked: str, reply: str):
        assert facts(agent(asked), customer(reply)) == []


class TestQuestionsForWhoTheCustomerIs:
    """A question for who the customer is, or whom something is under, asks for a name without its noun."""

    @pytest.mark.parametrize(
        ("asked", "reply", "name"),
        [
            ("who am I talking with?", "it's Ingrid Solberg", "Ingrid Solberg"),
            ("and you are?", "Kwame Mensah", "Kwame Mensah"),
            ("Und Sie sind ...?", "Björn Þórsson", "Björn Þórsson"),
            ("Auf wen läuft die Buchung?", "auf Hanna Kowalczyk", "Hanna Kowalczyk"),
            ("vous êtes ?", "Amélie Poulain", "Amélie Poulain"),
            ("C'est au nom de qui ?", "Rachid Benali", "Rachid Benali"),
            ("¿a nombre de quién está la reserva?", "Begoña Ibáñez", "Begoña Ibáñez"),
            ("¿con quién hablo?", "con Ramón Núñez", "Ramón Núñez"),
            ("op wiens naam staat de reservering?", "op naam van Pieter Bakker", "Pieter Bakker"),
            ("met wie spreek ik?", "met Fatma Demir", "Fatma Demir"),
        ],
    )
    def test_a_name(self, asked: str, reply: str, name: str):
        assert facts(agent(asked), customer(reply)) == [("name", name)]

    @pytest.mark.parametrize(
        ("asked", "reply"),
        [
            ("who is the parcel for?", "for my neighbour"),
            ("Für wen ist das Geschenk?", "für meine Mutter"),
            ("C'est pour qui ?", "pour moi"),
            ("¿Para quién es?", "para mi hijo"),
            ("Voor wie is het?", "voor mijn dochter"),
        ],
    )
    def test_answered_without_a_name(self, asked: str, reply: str):
        assert facts(agent(asked), customer(reply)) == []


class TestThanksAfterAName:
    """A word of thanks or please after a name in a reply closes it."""

    @pytest.mark.parametrize(
        ("asked", "reply", "name"),
        [
            ("your name please?", "Grace Hopper thanks", "Grace Hopper"),
            ("Wie ist Ihr Name?", "Lena Vogt, danke", "Lena Vogt"),
            ("Votre nom ?", "Paul Martin merci", "Paul Martin"),
            ("¿Su nombre?", "Lucía Gómez gracias", "Lucía Gómez"),
            ("Uw naam?", "Eva Jansen, graag", "Eva Jansen"),
        ],
    )
    def test_the_name_alone(self, asked: str, reply: str, name: str):
        assert facts(agent(asked), customer(reply)) == [("name", name)]

    @pytest.mark.parametrize(
        ("asked", "reply"),
        [("your name please?", "thanks"), ("Ihr Name?", "bitte"), ("Uw naam?", "bedankt")],
    )
    def test_thanks_alone_is_no_name(self, asked: str, reply: str):
        assert facts(agent(asked), customer(reply)) == []


class TestCardsByTheirLastDigits:
    """The last four digits near a card word are a card's, and a correction of them stays a card's;
    digits a phone's shape fits correct an identifier of as many digits."""

    @pytest.mark.parametrize(
        ("text", "digits"),
        [
            ("paid with my visa, the last four digits are 2231", "2231"),
            ("bitte auf die Kreditkarte, letzte 4 Ziffern 5567", "5567"),
            ("Ich habe mit der EC-Karte bezahlt, die letzten vier Ziffern sind 8810", "8810"),
            ("remboursez sur ma carte bleue, les 4 derniers chiffres 7741", "7741"),
            ("a la tarjeta, últimos 4 dígitos 3390", "3390"),
            ("op mijn bankpas, laatste 4 cijfers 6612", "6612"),
        ],
    )
    def test_after_a_card_word(self, text: str, digits: str):
        assert facts(customer(text)) == [("card", digits)]

    @pytest.mark.parametrize(
        ("text", "old", "new"),
        [
            ("the card ending 2290, no wait, it's 2209", "2290", "2209"),
            ("die Karte mit der Endung 1234, nein Moment, 1243", "1234", "1243"),
            ("la carte qui finit par 5521, pardon, 5512", "5521", "5512"),
            ("la tarjeta terminada en 7001, perdón, 7010", "7001", "7010"),
            ("de kaart eindigend op 3301, sorry, 3310", "3301", "3310"),
        ],
    )
    def test_corrected(self, text: str, old: str, new: str):
        found = ledger(customer(text))
        assert [(e.kind, e.value) for e in found] == [("card", old), ("card", new)]
        assert [e.value for e in superseded(found)] == [old]

    def test_an_account_corrected_by_digits_of_a_phones_shape(self):
        found = ledger(customer("account no. 61002347 sorry 61002374"))
        assert [(e.kind, e.value) for e in found] == [("account", "61002347"), ("account", "61002374")]
        assert [e.value for e in superseded(found)] == ["61002347"]

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("I called at 1530, sorry, 1545", []),
            ("my card ending 4410 got declined, sorry I'll call back at 1530", [("card", "4410")]),
            ("my phone is 07700900123, sorry 07700900132", [("phone", "07700900123"), ("phone", "07700900132")]),
        ],
    )
    def test_no_card_nor_account_of_other_digits(self, text: str, expected: list[tuple[str, str]]):
        assert facts(customer(text)) == expected


class TestALabelThenItsNumber:
    """A label, a few words of what it is, then a comma or an article and the word for number: the
    number is the label's."""

    @pytest.mark.parametrize(
        ("said", "fact"),
        [
            (agent("I've logged an incident for the broken lift, the number is 55120."), ("ticket", "55120")),
            (agent("I've raised a ticket with our engineers, the number is HD-44120."), ("ticket", "HD-44120")),
            (customer("Ich habe eine Bestellung aufgegeben, die Nummer ist 4471203"), ("order", "4471203")),
            (customer("J'ai une commande en attente, le numéro est 6612090"), ("order", "6612090")),
            (customer("hice un pedido ayer, el número es 8812345"), ("order", "8812345")),
            (customer("ik heb een bestelling geplaatst, het nummer is 7712034"), ("order", "7712034")),
        ],
    )
    def test_the_labels_number(self, said: tuple[str, str], fact: tuple[str, str]):
        assert facts(said, kinds=(*SCORED, "order")) == [fact]

    @pytest.mark.parametrize(
        ("text", "fact"),
        [
            ("my order is late, phone number 07700900123", ("phone", "07700900123")),
            ("I have a booking for Friday, the number is 0612345678", ("phone", "0612345678")),
            ("the ticket about my order, the number is 12345", ("number", "12345")),
        ],
    )
    def test_not_the_labels(self, text: str, fact: tuple[str, str]):
        assert facts(customer(text), kinds=(*SCORED, "order", "number")) == [fact]


class TestAValueBeforeItsLabel:
    """A value, then "is my" and its label: the label's kind, in every built-in language."""

    @pytest.mark.parametrize(
        ("text", "fact"),
        [
            ("hmueller2 ist mein Benutzername", ("username", "hmueller2")),
            ("jdupont75 c'est mon identifiant", ("username", "jdupont75")),
            ("marta_g es mi usuario", ("username", "marta_g")),
            ("pietje_p is mijn gebruikersnaam", ("username", "pietje_p")),
            ("sk8r_boi is my username, can't log in", ("username", "sk8r_boi")),
            ("K-558812 ist meine Kundennummer", ("customer_id", "K-558812")),
            ("CL-448120 is my client number", ("customer_id", "CL-448120")),
        ],
    )
    def test_the_labels_kind(self, text: str, fact: tuple[str, str]):
        assert facts(customer(text)) == [fact]

    @pytest.mark.parametrize(
        "text", ["this is my username problem", "what is my username?", "it is my account that was hacked"]
    )
    def test_no_value(self, text: str):
        assert facts(customer(text)) == []


class TestALabelAFewWordsAndAColon:
    """A label, a few words of where it is written, a colon and a code: the label's."""

    @pytest.mark.parametrize(
        ("text", "fact"),
        [
            ("my customer number's on the welcome letter: CX-7781230", ("customer_id", "CX-7781230")),
            ("mein Konto bei der Sparkasse: 55012398", ("account", "55012398")),
        ],
    )
    def test_the_labels_code(self, text: str, fact: tuple[str, str]):
        assert facts(customer(text)) == [fact]

    @pytest.mark.parametrize(
        ("text", "found"),
        [
            ("my order from Amazon: 1234 Main Street", []),
            ("my order from the shop phone: 0612345678", [("phone", "0612345678")]),
        ],
    )
    def test_not_the_labels(self, text: str, found: list[tuple[str, str]]):
        assert facts(customer(text), kinds=(*SCORED, "order")) == found


class TestSignaturesByTheirShape:
    """A signature closes a message: after a dash on its line, in capitals closing a message typed in
    lower case, or two words on a line of their own where case says nothing."""

    @pytest.mark.parametrize(
        ("text", "name"),
        [
            ("is my coat cleaned yet? left it on tuesday. -- Tomás Ibarra", "Tomás Ibarra"),
            ("ich warte seit drei wochen auf mein paket Jonas Becker", "Jonas Becker"),
            ("ma carte ne marche plus merci Camille Roux", "Camille Roux"),
            ("ayuda por favor Lucía Fernández", "Lucía Fernández"),
            ("mijn fiets is gestolen bij het station Daan Visser", "Daan Visser"),
            ("the locker wont open can you help\nsunita rao", "sunita rao"),
            ("das schließfach geht nicht auf\nlukas brandt", "lukas brandt"),
            ("le casier ne s'ouvre pas\nnadia haddad", "nadia haddad"),
            ("la taquilla no abre\npablo ortega", "pablo ortega"),
            ("het kluisje gaat niet open\nfemke smit", "femke smit"),
        ],
    )
    def test_a_signature(self, text: str, name: str):
        assert facts(customer(text)) == [("name", name)]

    @pytest.mark.parametrize(
        "text",
        [
            "i cant log in to the Mobile App",
            "i want to upgrade my Samsung Galaxy",
            "de fiets werkt niet op de Grote Markt",
            "la bici no funciona en la Plaza Mayor",
            "le vélo est bloqué à la Gare Centrale",
            "das rad steht am Alten Markt",
            "ik ben al sinds 2017 klant en betaal 12,50 euro per maand",
            "the locker wont open\nplease help",
        ],
    )
    def test_no_signature(self, text: str):
        assert facts(customer(text)) == []

    def test_a_name_then_speaking_and_a_dash(self):
        text = "Hello, Oksana Kovalenko speaking - my son has a lesson on Friday"
        assert facts(customer(text)) == [("name", "Oksana Kovalenko")]


class TestANameCorrectedAfterATypo:
    """A name corrected after a word for a typo, or after "it's" a few words past the cue."""

    @pytest.mark.parametrize(
        ("first", "second", "old", "new"),
        [
            ("hi its lena fox, my locker is stuck", "sorry autocorrect haha its Lena Fuchs", "lena fox", "Lena Fuchs"),
            (
                "Ich heiße Anna Schmidt",
                "Entschuldigung, Tippfehler, es ist Anna Schmitt",
                "Anna Schmidt",
                "Anna Schmitt",
            ),
            ("je suis Anna Dupont", "pardon, faute de frappe, c'est Anna Dupond", "Anna Dupont", "Anna Dupond"),
            ("mijn naam is Anna de Wit", "sorry typfout, het is Anna de Witt", "Anna de Wit", "Anna de Witt"),
        ],
    )
    def test_the_new_name_is_current(self, first: str, second: str, old: str, new: str):
        found = ledger(customer(first), agent("Thanks, one moment."), customer(second))
        assert [(e.kind, e.value) for e in found if e.kind == "name"] == [("name", old), ("name", new)]
        assert [e.value for e in superseded(found)] == [old]
