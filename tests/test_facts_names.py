"""Names: found by their cue, their place in the conversation and their shape, never from a list of
people's names."""

from __future__ import annotations

import pytest

from appliance.facts.checker import check
from appliance.facts.ledger import superseded
from appliance.facts.names import case_blind, norm
from appliance.facts.slots import requested
from appliance.types import Turn, current_facts

from .said import agent, customer, every, facts, ledger


class TestWordsOfDatesAndPlaces:
    """A word that is also a weekday, a month or a place's is a name's where the customer introduces
    themselves or a name was asked for."""

    @pytest.mark.parametrize(
        ("text", "name"),
        [
            ("My name is Marta Lunes", "Marta Lunes"),
            ("Me llamo Marta Lunes y tengo un problema", "Marta Lunes"),
            ("My name is Domingo Pérez", "Domingo Pérez"),
            ("je m'appelle Jean Mardi", "Jean Mardi"),
            ("Ich heiße Anna Freitag", "Anna Freitag"),
            ("mijn naam is Els Zondag", "Els Zondag"),
            ("I am Mardi Domingo, calling about my order", "Mardi Domingo"),
            ("My name is April", "April"),
            ("My name is Florence Madrid", "Florence Madrid"),
        ],
    )
    def test_after_a_cue_of_ones_own_name(self, text: str, name: str):
        assert facts(customer(text), kinds=("name", "date")) == [("name", name)]

    @pytest.mark.parametrize(
        ("asked", "reply", "name"),
        [
            ("Could I get your name?", "Marta Lunes", "Marta Lunes"),
            ("What is your name?", "June Sunday", "June Sunday"),
            ("Your name, please?", "Paris Hilton", "Paris Hilton"),
            ("Who am I speaking with?", "Sydney Park", "Sydney Park"),
            ("Could I have your name?", "John Smith Thanks", "John Smith"),
            ("Wie ist Ihr Name?", "Anna Freitag, danke", "Anna Freitag"),
            ("¿Su nombre, por favor?", "Lucía Martes", "Lucía Martes"),
            ("Votre nom, s'il vous plaît ?", "Paul Avril", "Paul Avril"),
            ("Wat is uw naam?", "Sanne Maandag", "Sanne Maandag"),
        ],
    )
    def test_in_the_reply_to_a_name_request(self, asked: str, reply: str, name: str):
        assert facts(agent(asked), customer(reply), kinds=("name", "date")) == [("name", name)]

    @pytest.mark.parametrize(
        ("text", "found"),
        [
            ("Hi, I am Tom. Friday works for me", [("name", "Tom"), ("date", "Friday")]),
            ("Can we move it to Lunes?", [("date", "Lunes")]),
            ("Dr Johnson Saturday 10am", [("name", "Johnson"), ("date", "Saturday")]),
        ],
    )
    def test_elsewhere_a_day_stays_a_date(self, text: str, found: list[tuple[str, str]]):
        assert facts(customer(text), kinds=("name", "date")) == found


class TestNameAsTheReplyToANameRequest:
    @pytest.mark.parametrize(
        ("asked", "reply", "name"),
        [
            ("Can I have your name please?", "mei lin chen", "mei lin chen"),
            ("What's your full name?", "ok its jan van der berg", "jan van der berg"),
            ("Could I get your name, please?", "DARIUS OKONKWO", "DARIUS OKONKWO"),
            ("Wie ist Ihr Name, bitte?", "ja, karl-heinz von der heide", "karl-heinz von der heide"),
            ("Comment vous appelez-vous ?", "c'est NGUYEN THI LAN", "NGUYEN THI LAN"),
            ("¿Me puede decir su nombre, por favor?", "sí, josé luis de la cruz", "josé luis de la cruz"),
            ("Wat is uw naam, alstublieft?", "pieter de jong", "pieter de jong"),
            ("Could I get your full name, please?", "Ben...wait friend just texted me", "Ben"),  # capitalised as before
        ],
    )
    def test_any_case_kept_as_written(self, asked: str, reply: str, name: str):
        (entry,) = ledger(agent(asked), customer(reply))
        assert (entry.kind, entry.value, entry.slot) == ("name", name, "name:customer")
        assert entry.norm == norm(name)  # lower case, for the checker to match without case

    @pytest.mark.parametrize(
        ("asked", "reply"),
        [
            ("Can I have your name please?", "why do you need it"),
            ("Can I have your name please?", "not telling you"),
            ("Could I get your full name, please?", "hold on let me check"),
            ("Wie ist Ihr Name, bitte?", "warum brauchen Sie das"),
            ("Quel est votre nom, s'il vous plaît ?", "je préfère ne pas le dire"),
            ("¿Cuál es su nombre completo, por favor?", "prefiero no decirlo"),
            ("Wat is uw naam, alstublieft?", "waarom wilt u dat weten"),
        ],
    )
    def test_no_name_in_a_reply_that_gives_none(self, asked: str, reply: str):
        assert every(agent(asked), customer(reply), kinds=("name",)) == []


class TestNameAfterACue:
    @pytest.mark.parametrize(
        ("text", "name"),
        [
            ("hi my name is mei lin chen and i need help", "mei lin chen"),
            ("MY NAME IS GRACE O'MALLEY AND MY CARD IS BLOCKED", "GRACE O'MALLEY"),
            ("hallo, ich heiße jonas becker und habe eine frage", "jonas becker"),
            ("bonjour, je m'appelle chloé martin, j'ai un problème", "chloé martin"),
            ("hola, me llamo diego ramírez y necesito ayuda", "diego ramírez"),
            ("hoi, mijn naam is daan visser en ik heb een vraag", "daan visser"),
            ("Buenos días, me llamo ana maría de la vega.", "ana maría de la vega"),
        ],
    )
    def test_a_name_in_lower_case_after_a_cue_that_always_names(self, text: str, name: str):
        assert every(customer(text)) == [("name", name)]

    @pytest.mark.parametrize(
        "text",
        [
            "my name is on the card but it's misspelled",
            "i'm looking for a cheap hotel in the centre",  # "I'm" names only a capitalised name
            "je suis client depuis 2015",
            "soy cliente desde 2018",
            "ik ben al sinds 2017 klant",
            "Ich bin seit 2019 Kunde.",
        ],
    )
    def test_no_name_where_the_words_after_the_cue_are_common_words(self, text: str):
        assert every(customer(text), kinds=("name",)) == []


class TestSignature:
    @pytest.mark.parametrize(
        ("text", "name"),
        [
            ("Can I cancel this order and get a refund? Tomasz Wierzbicki", "Tomasz Wierzbicki"),
            ("The app keeps logging me out.\nRegards,\nPriya Raghunathan", "Priya Raghunathan"),
            ("please send the invoice again. thanks, olumide bakare", "olumide bakare"),
            ("Bitte um Rückruf. Anna-Lena Koch", "Anna-Lena Koch"),
            ("merci de me rappeler. cordialement, margaux petit", "margaux petit"),
            ("No puedo entrar en mi cuenta. Andrés Molina", "Andrés Molina"),
            ("Kunt u mij terugbellen? Fleur Janssen", "Fleur Janssen"),
        ],
    )
    def test_a_short_run_of_name_words_closing_a_message(self, text: str, name: str):
        ((entry),) = ledger(customer(text))
        assert (entry.kind, entry.value, entry.slot) == ("name", name, "name:customer")

    @pytest.mark.parametrize(
        "text",
        [
            "ok thanks a lot",
            "Great, that fixed it. Thank you so much",
            "Where is my order? Still Waiting",
            "Thanks again. Best Wishes",
            "I need a room for two nights. Hilton Garden Inn",
            "i need help tomasz wierzbicki",  # lower case and no sign-off: nothing says it is a signature
            "Wo bleibt meine Lieferung? Immer Noch Nichts",
            "Le colis est abîmé. Merci Beaucoup",
            "Mi portátil Lenovo ThinkPad no enciende. Muchas Gracias",
            "Mijn Philips Airfryer doet het niet. Alvast Bedankt",
        ],
    )
    def test_no_signature(self, text: str):
        assert every(customer(text), kinds=("name",)) == []

    def test_a_signature_that_is_not_the_name_given_before_is_left_out(self):
        said = (customer("My name is Dana Lee."), agent("Hi Dana."), customer("I want to return the shoes. Nike Air"))
        assert [e.value for e in current_facts(ledger(*said)) if e.slot == "name:customer"] == ["Dana Lee"]


class TestNamesWhereCaseSaysNothing:
    @pytest.mark.parametrize(
        ("text", "name"),
        [
            ("im wendell okafor, calling about water damage", "wendell okafor"),
            ("i'm olga petrova, my gym card stopped working", "olga petrova"),
            ("HELLO THIS IS DOROTHY WILLIAMS I NEED MY PRESCRIPTION", "DOROTHY WILLIAMS"),
            ("hey there, tom hughes here. the app wont load", "tom hughes"),
            ("hallo hier ist tobias brandt, mein internet geht nicht", "tobias brandt"),
            ("je suis sophie martin et j'ai un souci", "sophie martin"),
            ("hola, soy maría lópez y tengo un problema", "maría lópez"),
            ("hallo, ik ben jan de vries en ik heb een vraag", "jan de vries"),
        ],
    )
    def test_a_two_word_name_after_a_cue(self, text: str, name: str):
        assert facts(customer(text)) == [("name", name)]

    @pytest.mark.parametrize(
        "text",
        [
            "I AM MOVING HOUSE AND NEED TO TRANSFER MY ELECTRICITY",
            "im flying economy to paris on friday",
            "im super annoyed with you people",
            "this is taking forever, please help",
            "THIS IS TOTALLY UNACCEPTABLE",
            "im fine",
            "Ich bin im Urlaub bis Montag, bitte schreiben Sie mir.",  # "im" is German too
            "je suis vraiment déçue",
            "soy muy paciente pero esto ya es demasiado",
            "ik ben erg ontevreden over de service",
        ],
    )
    def test_no_name_from_verbs_adverbs_and_one_word(self, text: str):
        assert facts(customer(text), kinds=("name",)) == []

    def test_a_title_keeps_its_case(self):
        assert not case_blind("yes go ahead. Dr. Morgan is a good friend of mine")
        assert case_blind("Hi, im tom. Thanks") and case_blind("I NEED HELP")
        assert facts(customer("yes go ahead. Dr. Morgan is a good friend of mine")) == [("name", "Morgan")]


class TestNameCuesOfEveryLanguage:
    @pytest.mark.parametrize(
        ("text", "name"),
        [
            ("name is bjorn lindqvist, need to move my flight", "bjorn lindqvist"),
            ("Good afternoon, you're speaking with Ines Carvalho from 12B", "Ines Carvalho"),
            ("Good morning. My name's Fatima Zahra El Idrissi and I need a copy", "Fatima Zahra El Idrissi"),
            ("Guten Tag, Weber mein Name. Ich habe eine Frage.", "Weber"),
            ("Hallo, hier ist Tobias Brandt, ich habe eine Frage zu meinem Tarif.", "Tobias Brandt"),
            (
                "Bonjour, ici Jean-Baptiste de La Fontaine, je voudrais modifier mon vol.",
                "Jean-Baptiste de La Fontaine",
            ),
            ("Bonjour, Sophie Martin à l'appareil.", "Sophie Martin"),
            ("Buenos días, le habla Roberto Sánchez, llamo por la factura.", "Roberto Sánchez"),
            ("Goedemiddag, u spreekt met Daan van der Meer, ik wil omboeken.", "Daan van der Meer"),
            ("Goedemorgen, met Kees Mulder. Mijn pakket is beschadigd.", "Kees Mulder"),
            ("Hi it's Priya Nair, I called yesterday about my router", "Priya Nair"),
            ("Hello, it's Ravi Patel again about the outage", "Ravi Patel"),
            ("Salut, moi c'est Léo Bernard, ma commande n'est pas arrivée", "Léo Bernard"),
        ],
    )
    def test_a_cue_an_introduction_or_a_label(self, text: str, name: str):
        assert facts(customer(text)) == [("name", name)]

    @pytest.mark.parametrize(
        "text",
        [
            "Hallo, hier ist die Rechnung vom Mai, die ist falsch.",
            "Hier ist Ihre Bestellnummer",
            "Bonjour, c'est pour une réclamation",
            "Bedankt. Met Vriendelijke Groet",
            "Goedemiddag, met de vraag of mijn pakket al onderweg is",
            "Mein Name steht falsch auf der Rechnung.",
            "It's Broken again, please fix it",  # "it's" introduces only after a greeting
            "Met vriendelijke groet",
        ],
    )
    def test_no_name_after_an_introduction_of_something_else(self, text: str):
        assert facts(customer(text), kinds=("name",)) == []


class TestNameInReplyToARequest:
    @pytest.mark.parametrize(
        ("asked", "reply", "name"),
        [
            ("What's the name on the prescription?", "nguyen thi lan, its for me", "nguyen thi lan"),
            ("Can I take a name for the delivery?", "Its Jo Van Der Berg", "Jo Van Der Berg"),
            ("What name is the reservation under?", "its under kowalski, anna", "kowalski, anna"),
            ("And your name?", "de la cruz, maria", "de la cruz, maria"),
            ("What's the policyholder's name?", "that would be gregor mendelsohn", "gregor mendelsohn"),
            ("Darf ich fragen, mit wem ich spreche?", "Ja klar, Müller, Sabine", "Müller, Sabine"),
            ("Mit wem spreche ich, bitte?", "Mit Frau Dr. Ingrid Lange", "Ingrid Lange"),
            ("À quel nom est la commande ?", "Lefèvre Camille", "Lefèvre Camille"),
            ("C'est à quel nom ?", "au nom de Martin, Sophie", "Martin, Sophie"),
            ("¿A nombre de quién está el pedido?", "María José de la Torre", "María José de la Torre"),
            ("¿Con quién tengo el gusto?", "con Roberto Sánchez", "Roberto Sánchez"),
            ("Mag ik uw naam, alstublieft?", "ja hoor, pieter de jong", "pieter de jong"),
            ("Op welke naam staat de bestelling?", "Van den Broek, Sanne", "Van den Broek, Sanne"),
            ("Wie war nochmal Ihr Name?", "ähm, kevin schröder", "kevin schröder"),
            ("Who is the account holder?", "me, Thomas Becker", "Thomas Becker"),
            (
                "Can you confirm your customer ID and the name on the account?",
                "id is 3390021 and the name is rosa delgado",
                "rosa delgado",
            ),
            ("May I have your name?", "Mrs. Jane Doe", "Jane Doe"),
        ],
    )
    def test_by_place_in_any_order(self, asked: str, reply: str, name: str):
        (entry,) = [e for e in ledger(agent(asked), customer(reply)) if e.kind == "name"]
        assert (entry.value, entry.slot) == (name, "name:customer")

    @pytest.mark.parametrize(
        ("asked", "reply"),
        [
            ("¿Cuál es su nombre?", "perdón, ¿para qué lo necesita?"),
            ("¿Cuál es su nombre?", "de acuerdo, un momento"),
            ("What's your name?", "Its complicated lol"),
            ("Can I have your name please?", "sure thing"),
            ("Wat is uw naam?", "momentje"),
            ("Quel est votre nom ?", "pourquoi vous en avez besoin ?"),
        ],
    )
    def test_no_name_in_a_reply_that_gives_none(self, asked: str, reply: str):
        assert facts(agent(asked), customer(reply), kinds=("name",)) == []


class TestPartsOfAName:
    @pytest.mark.parametrize(
        ("said", "expected"),
        [
            (
                (customer("My first name is Grace and my surname is Okonkwo"),),
                [("Grace", "first name"), ("Okonkwo", "surname")],
            ),
            (
                (agent("May I have your name?"), customer("Grace"), agent("And your surname?"), customer("Okonkwo")),
                [("Grace", ""), ("Okonkwo", "surname")],
            ),
            (
                (agent("Wie ist Ihr Vorname?"), customer("Grace"), agent("Und Ihr Nachname?"), customer("Okonkwo")),
                [("Grace", "Vorname"), ("Okonkwo", "Nachname")],
            ),
            ((agent("Could I have your first and last name?"), customer("Grace Okonkwo")), [("Grace Okonkwo", "")]),
            ((customer("My name is Grace Okonkwo, Grace is my first name"),), [("Grace Okonkwo", "")]),
        ],
    )
    def test_each_part_given_on_its_own_stays_current_with_its_label(self, said, expected):
        current = current_facts(ledger(*said))
        assert [(e.value, e.label) for e in current if e.kind == "name" and e.speaker == "customer"] == expected

    def test_a_weekday_ends_a_name_after_a_title(self):
        said = customer("My name is Alexis and the Dr is Dr Johnson Saturday 10am")
        assert facts(said, kinds=("name",)) == [("name", "Alexis"), ("name", "Johnson")]


class TestSignaturesAfterASignOff:
    @pytest.mark.parametrize(
        ("text", "name"),
        [
            ("the wifi has been out since monday, please help asap\n- dev patel", "dev patel"),
            ("my order never arrived, thanks in advance - kenji tanaka", "kenji tanaka"),
            ("the app crashes whenever I open it - Liam Murphy", "Liam Murphy"),
            ("Ik wil de jas retourneren. Met vriendelijke groet, Jan de Vries", "Jan de Vries"),
            ("Kunnen jullie mij terugbellen? Groet, Eva van Dam", "Eva van Dam"),
            ("Ich möchte mein Abo kündigen. Gruß, Lukas Hartmann", "Lukas Hartmann"),
        ],
    )
    def test_after_a_dash_or_a_sign_off(self, text: str, name: str):
        assert facts(customer(text)) == [("name", name)]

    @pytest.mark.parametrize(
        "text",
        [
            "Bezüglich Ticketnummer TK-88731: der Drucker druckt nicht.",
            "Meine Handynummer: 0171 1234567",
            "Client ID: AB-99812, I need my invoice",
            "Rechnung Nr. 2024-118822 ist falsch",
        ],
    )
    def test_the_words_of_identifiers_are_no_name(self, text: str):
        assert facts(customer(text), kinds=("name",)) == []


class TestNamesOfOtherTraditions:
    """Letters outside ASCII and the particles of Irish, Portuguese, Spanish and Dutch names, in any case."""

    @pytest.mark.parametrize(
        ("asked", "reply", "name"),
        [
            ("Could I have your name for the form?", "sure, it's caoimhe ní bhriain", "caoimhe ní bhriain"),
            ("What's your last name?", "Ó Súilleabháin", "Ó Súilleabháin"),
            ("Wie ist Ihr Name?", "ja, Łukasz Wójcik", "Łukasz Wójcik"),
            ("¿Cuál es su nombre completo?", "maría de los ángeles pérez", "maría de los ángeles pérez"),
            ("Quel est votre nom ?", "oui c'est joão dos santos", "joão dos santos"),
            ("Mag ik uw naam?", "jan van 't hoff", "jan van 't hoff"),
        ],
    )
    def test_in_reply_to_a_request(self, asked: str, reply: str, name: str):
        assert facts(agent(asked), customer(reply)) == [("name", name)]

    @pytest.mark.parametrize(
        ("text", "name"),
        [
            ("my name is Aoife Ní Bhriain and I lost my bag", "Aoife Ní Bhriain"),
            ("Hallo, mijn naam is Kees van 't Riet en ik bel over mijn pas", "Kees van 't Riet"),
            ("Ik heb een vraag. Groetjes, Bram van 't Zand", "Bram van 't Zand"),
        ],
    )
    def test_after_a_cue_or_a_sign_off(self, text: str, name: str):
        assert facts(customer(text)) == [("name", name)]

    def test_a_part_of_the_name_keeps_its_label_with_a_particle(self):
        (e,) = ledger(agent("What's your last name?"), customer("Ó Súilleabháin"))
        assert e.label == "last name" and e.slot == "name:customer:last name"


class TestNameSomethingIsHeldUnder:
    """ "in the name of", "au nom de", "a nombre de", "auf den Namen", "op naam van": the customer's name,
    in any case, whoever says it; "under" a capitalised name of two words from the agent reading one back."""

    @pytest.mark.parametrize(
        ("text", "name"),
        [
            ("the parking permit is in the name of björn sørensen", "björn sørensen"),
            ("it's booked under Priya Raghunathan, I think", "Priya Raghunathan"),
            ("la carte est au nom de Hélène Dubois-Martin, merci", "Hélène Dubois-Martin"),
            ("el abono está a nombre de íñigo arriaga", "íñigo arriaga"),
            ("Die Reservierung läuft auf den Namen Herbert Gruber.", "Herbert Gruber"),
            ("het abonnement staat op naam van ayşe demir", "ayşe demir"),
            ("Die Buchung läuft auf den Namen Weiß, Gerda", "Weiß, Gerda"),
        ],
    )
    def test_is_the_customers(self, text: str, name: str):
        (e,) = ledger(customer(text))
        assert (e.kind, e.value, e.slot) == ("name", name, "name:customer")

    def test_read_back_by_the_agent_and_corrected(self):
        said = ledger(
            agent("I have the booking under Marta Kowalczyk, is that correct?"),
            customer("no, it's Marta Kowalczyk-Nowak"),
        )
        assert [e.value for e in superseded(said)] == ["Marta Kowalczyk"]
        assert [e.value for e in current_facts(said)] == ["Marta Kowalczyk-Nowak"]

    @pytest.mark.parametrize(
        ("said"),
        [
            (agent("You'll find it under Settings."),),
            (agent("I have it under Privacy Settings, can you see it?"),),
            (customer("it's booked under my name"),),
            (customer("la réservation est au nom de la société"),),
            (customer("está a nombre de mi empresa"),),
            (customer("het staat op naam van mijn man"),),
            (customer("need a table for Jane Doe at 7"),),  # "for" names no one outside a reply
            (customer("we need tickets for London Liverpool Street"),),
        ],
    )
    def test_not_a_name(self, said: tuple[tuple[str, str], ...]):
        assert facts(*said, kinds=("name",)) == []

    def test_the_checker_holds_the_customer_to_the_name_it_was_given(self):
        said = ledger(customer("my name is Dana Whitfield"))
        turns = (Turn("s", 0, "customer", "my name is Dana Whitfield"),)
        found = check(
            "Your booking is under the name of Dana Whitfield.", ledger=said, summary="", transcript=turns, question=""
        )
        assert found.findings == ()
        wrong = check(
            "Your booking is under the name of Dana Whitman.", ledger=said, summary="", transcript=turns, question=""
        )
        assert [f.status for f in wrong.findings] == ["contradiction"]


class TestReplyThatDoesNotOpenWithTheName:
    @pytest.mark.parametrize(
        ("asked", "reply", "name"),
        [
            ("Whose name is on the booking?", "the booking is for tran thi mai", "tran thi mai"),
            ("What name is the parcel under?", "it should be under priya raghunathan", "priya raghunathan"),
            ("Auf welchen Namen läuft die Buchung?", "die ist für herbert gruber", "herbert gruber"),
            ("Au nom de qui est la réservation ?", "c'est pour Léa Fontaine", "Léa Fontaine"),
            ("¿A nombre de quién está la reserva?", "es para Lucía", "Lucía"),
            ("Op welke naam staat de reservering?", "die is voor sanne de wit", "sanne de wit"),
            ("C'est à quel nom ?", "c'est pour mme nguyen thi hoa", "nguyen thi hoa"),
            ("Could I get your name?", "yes it's mr tom hughes", "tom hughes"),
        ],
    )
    def test_after_the_word_of_what_it_is_for(self, asked: str, reply: str, name: str):
        assert facts(agent(asked), customer(reply)) == [("name", name)]

    @pytest.mark.parametrize(
        ("asked", "reply"),
        [
            ("Whose name is the ticket for?", "it's for my sister"),
            ("Für wen ist die Buchung? Auf welchen Namen?", "für morgen bitte"),
            ("¿A nombre de quién?", "es para mañana"),
            ("Op welke naam staat de reservering?", "voor twee personen"),
            ("Au nom de qui ?", "pour le bureau"),
        ],
    )
    def test_not_a_name(self, asked: str, reply: str):
        assert facts(agent(asked), customer(reply), kinds=("name",)) == []


class TestNamesOfKin:
    """ "my son, oliver grant", "meinen Mann, Klaus-Peter Zimmermann": the name of another, kept with a slot of its own."""

    @pytest.mark.parametrize(
        ("text", "name"),
        [
            ("it's for my son, oliver grant", "oliver grant"),
            ("I also need an appointment for my daughter Emma", "Emma"),
            ("auf meinen Mann, Klaus-Peter Zimmermann", "Klaus-Peter Zimmermann"),
            ("c'est pour ma fille Inès, elle a 8 ans", "Inès"),
            ("la cita es para mi hija, lucía gómez", "lucía gómez"),
            ("het abonnement is van mijn dochter Noor", "Noor"),
        ],
    )
    def test_the_name_after_a_word_of_kin(self, text: str, name: str):
        (e,) = ledger(customer(text))
        assert (e.kind, e.value, e.slot) == ("name", name, f"name={e.norm}")

    @pytest.mark.parametrize(
        "text",
        [
            "it's for my son, who is 5",
            "my wife and I need two tickets",
            "Das ist für meinen Sohn, danke",
            "my wife Visa card got declined twice",  # a word of a product is no one's name
        ],
    )
    def test_not_a_name(self, text: str):
        assert facts(customer(text), kinds=("name",)) == []

    def test_the_customers_own_name_stays_theirs(self):
        found = ledger(customer("my name is Dana Whitfield and I'm calling for my son, Leo."))
        assert {(e.value, e.slot) for e in found} == {("Dana Whitfield", "name:customer"), ("Leo", "name=leo")}


class TestPartsOfANameByTheirLabel:
    @pytest.mark.parametrize(
        ("said", "parts"),
        [
            (
                (agent("What name should the card show?"), customer("first name Siobhán, surname Ó Briain")),
                [("Siobhán", "first name"), ("Ó Briain", "surname")],
            ),
            ((customer("surname's Kowalczyk, the parcel is at the depot"),), [("Kowalczyk", "surname")]),
            ((customer("Vorname Jörg, Nachname Schäfer"),), [("Jörg", "Vorname"), ("Schäfer", "Nachname")]),
            (
                (customer("prénom : anaïs, nom de famille : lefèvre"),),
                [("anaïs", "prénom"), ("lefèvre", "nom de famille")],
            ),
            (
                (customer("apellido: núñez, nombre de pila: begoña"),),
                [("núñez", "apellido"), ("begoña", "nombre de pila")],
            ),
            ((customer("voornaam Fenna achternaam Bakker"),), [("Fenna", "voornaam"), ("Bakker", "achternaam")]),
            (
                (customer("nom de famille : de la fontaine, prénom : marie-claire"),),
                [("de la fontaine", "nom de famille"), ("marie-claire", "prénom")],
            ),
            (
                (customer("achternaam: van 't Wout, voornaam: Joost"),),
                [("van 't Wout", "achternaam"), ("Joost", "voornaam")],
            ),
        ],
    )
    def test_each_part_with_its_label(self, said: tuple[tuple[str, str], ...], parts: list[tuple[str, str]]):
        found = [e for e in ledger(*said) if e.kind == "name"]
        assert [(e.value, e.label) for e in found] == parts
        assert all(e.slot.startswith("name:customer:") for e in found)

    @pytest.mark.parametrize(
        "text",
        [
            "the last name field is empty on my form",
            "my mother's first name is Anna",  # another's name
            "my first name is spelled wrong on the card",
            "Der Vorname auf der Karte ist falsch geschrieben",
            "Der Vorname Feld ist leer im Formular",  # a noun, capitalised in German, is no name after a bare label
        ],
    )
    def test_not_a_name(self, text: str):
        assert facts(customer(text), kinds=("name",)) == []


class TestCuesAndRequestsOfNames:
    @pytest.mark.parametrize(
        ("text", "name"),
        [
            ("i go by Sasha, it's short for Alexandra", "Sasha"),
            ("hey i go by the name of kit", "kit"),
            ("met Jeroen Smit, ik bel over mijn factuur", "Jeroen Smit"),  # a Dutch call opens so
            ("this is Fr. Tomasz Nowicki from St Mary's parish", "Tomasz Nowicki"),  # a title is no name
        ],
    )
    def test_a_cue(self, text: str, name: str):
        assert facts(customer(text)) == [("name", name)]

    @pytest.mark.parametrize(
        "text",
        [
            "i go by bus every day and the card never works",
            "I go by train to work",
            "Met Kerst ben ik weg, kan het pakket later?",
            "met de trein kom ik morgen",
            "It's Broken again, please fix it",
        ],
    )
    def test_no_name(self, text: str):
        assert facts(customer(text), kinds=("name",)) == []

    @pytest.mark.parametrize(
        ("asked", "reply", "name"),
        [
            ("And you are…?", "OKAFOR Chidi", "OKAFOR Chidi"),
            ("Vous êtes madame… ?", "LEROY Camille", "LEROY Camille"),
            ("Sie sind Herr …?", "Brandt", "Brandt"),
            ("¿Usted es el señor…?", "Ernesto GARCÍA", "Ernesto GARCÍA"),
            ("U bent meneer…?", "de Vries", "de Vries"),
        ],
    )
    def test_a_request_by_title_and_the_surname_in_capitals(self, asked: str, reply: str, name: str):
        assert requested(asked) == {"name"}
        assert facts(agent(asked), customer(reply)) == [("name", name)]

    @pytest.mark.parametrize(
        ("asked", "reply"),
        [("Vous êtes monsieur… ?", "attendez une seconde"), ("And you are…?", "just a customer, why?")],
    )
    def test_a_request_by_title_answered_without_a_name(self, asked: str, reply: str):
        assert facts(agent(asked), customer(reply), kinds=("name",)) == []


class TestSignaturesWhereCaseSaysNothing:
    @pytest.mark.parametrize(
        ("text", "name"),
        [
            ("hello, where is my parcel? mei lin chen", "mei lin chen"),
            ("el paquete no llega. maría de los ángeles pérez", "maría de los ángeles pérez"),
            ("WHERE IS MY PARCEL. LUCAS PEREIRA DA COSTA", "LUCAS PEREIRA DA COSTA"),
        ],
    )
    def test_three_name_words_closing_the_message(self, text: str, name: str):
        assert facts(customer(text)) == [("name", name)]

    @pytest.mark.parametrize(
        "text",
        [
            "order arrived damaged. box crushed",
            "thanks for nothing. mark jones",  # two words: as often a phrase as a name
            "hi, wifi down since monday. router blinking red",
            "parcel never came. very annoyed customer",
        ],
    )
    def test_not_a_signature(self, text: str):
        assert facts(customer(text), kinds=("name",)) == []


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
