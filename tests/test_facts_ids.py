"""Identifiers: codes by their label and their shape, accounts, cards by their last digits, usernames and
membership levels, in every language; national ids and IBANs by their check digits (python-stdnum)."""

from __future__ import annotations

import pytest

from appliance.facts.entities import extract
from appliance.facts.ledger import superseded
from appliance.types import current_facts

from .said import SCORED, agent, customer, every, facts, ledger


class TestHandles:
    @pytest.mark.parametrize(
        ("said", "expected"),
        [
            ((agent("What is your username?"), customer("sure.  it's rkowalski77")), ("username", "rkowalski77")),
            ((agent("Can I have your customer ID, please?"), customer("C-4471902")), ("customer_id", "C-4471902")),
            ((customer("my member number is 88120455 and the app won't load"),), ("member_number", "88120455")),
            ((agent("What is your membership level?"), customer("gold")), ("member_level", "gold")),
            ((customer("I already have a ticket number: TK-20931"),), ("ticket", "TK-20931")),
            ((agent("Wie lautet Ihr Benutzername?"), customer("klar, jbecker_91")), ("username", "jbecker_91")),
            ((customer("meine Kundennummer ist K-558812"),), ("customer_id", "K-558812")),
            ((agent("Quel est votre nom d'utilisateur ?"), customer("c'est amartin84")), ("username", "amartin84")),
            ((customer("j'ai déjà un numéro de ticket : INC-4410"),), ("ticket", "INC-4410")),
            ((agent("¿Cuál es su número de socio?"), customer("es 3390127")), ("member_number", "3390127")),
            ((customer("mi número de cliente es 99812301"),), ("customer_id", "99812301")),
            ((agent("Wat is uw gebruikersnaam?"), customer("dvisser12")), ("username", "dvisser12")),
            ((customer("mijn klantnummer is 33019922"),), ("customer_id", "33019922")),
        ],
    )
    def test_by_request_or_by_label(self, said: tuple[tuple[str, str], ...], expected: tuple[str, str]):
        assert every(*said) == [expected]

    @pytest.mark.parametrize(
        "said",
        [
            (agent("What is your username?"), customer("i don't remember it")),
            (agent("What is your username?"), customer("I think it is on my card but not sure")),
            (agent("What is your membership level?"), customer("i am not sure")),
            (customer("my login failed again"),),
            (customer("I've been a member since 2019"),),
            (agent("Wie lautet Ihr Benutzername?"), customer("weiß ich nicht")),
        ],
    )
    def test_nothing_of_the_wrong_shape(self, said: tuple[tuple[str, str], ...]):
        assert every(*said) == []

    def test_a_handle_the_agent_states_with_its_label(self):
        assert every(agent("Your username is mchen_22, is that right?")) == [("username", "mchen_22")]


class TestCardByItsLastDigits:
    @pytest.mark.parametrize(
        "text",
        [
            "my card ending 4821 was swallowed by your ATM",
            "meine Karte mit der Endung 4821 wurde eingezogen",
            "ma carte se terminant par 4821 a été avalée par le distributeur",
            "mi tarjeta terminada en 4821 se quedó en el cajero",
            "mijn pas eindigend op 4821 is ingeslikt door de automaat",
        ],
    )
    def test_a_cards_last_four_not_an_account(self, text: str):
        assert every(customer(text)) == [("card", "4821")]

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("my account ending 4821 is overdrawn", [("account", "4821")]),
            ("my card was declined 3 times today", []),
            ("die Karte wurde 2 mal abgelehnt", []),
        ],
    )
    def test_an_account_ending_stays_an_account_and_a_count_is_no_card(self, text: str, expected):
        assert every(customer(text)) == expected


class TestHandlesAndLevels:
    @pytest.mark.parametrize(
        ("said", "expected"),
        [
            ((agent("Which status do you hold?"), customer("Gold")), [("member_level", "Gold")]),
            (
                (agent("And your member number please?"), customer("GM-77310 and im on the premium tier")),
                [("member_number", "GM-77310"), ("member_level", "premium")],
            ),
            ((customer("I have platinum status with you"),), [("member_level", "platinum")]),
            ((customer("Ich bin Goldkunde seit Jahren"),), [("member_level", "Gold")]),
            ((customer("ja, FC-302281, ich bin Platin-Mitglied"),), [("member_level", "Platin")]),
            ((customer("je suis client platine depuis 2019"),), [("member_level", "platine")]),
            ((customer("sí, el S-118204, y soy socio oro"),), [("member_level", "oro")]),
            ((customer("ik heb een Gold-abonnement"),), [("member_level", "Gold")]),
            (
                (agent("Avez-vous votre numéro d'adhérent ?"), customer("oui 00418827, je suis membre premium")),
                [("member_number", "00418827"), ("member_level", "premium")],
            ),
            ((agent("Wat is uw gebruikersnaam?"), customer("dat is kvdberg_01")), [("username", "kvdberg_01")]),
            (
                (agent("Wie lautet Ihr Benutzername?"), customer("der lautet s.wagner_84")),
                [("username", "s.wagner_84")],
            ),
            ((customer("Ticket-Nr. 44810 ist immer noch offen"),), [("ticket", "44810")]),
            ((customer("I'm a Gold Plus member and my lounge access was refused"),), [("member_level", "Gold Plus")]),
            ((customer("customer ref CX-20391, still waiting for the engineer"),), [("customer_id", "CX-20391")]),
        ],
    )
    def test_by_request_label_or_noun(self, said, expected):
        assert facts(*said) == expected

    @pytest.mark.parametrize(
        "said",
        [
            (customer("I'm flying to the Gold Coast on the 14th"),),
            (customer("Can I upgrade to Premium Economy?"),),
            (agent("What's your username?"), customer("probably my email")),
            (agent("What is your member number?"), customer("I don't have it with me")),
        ],
    )
    def test_no_level_or_handle_without_its_place(self, said):
        assert facts(*said, kinds=("member_level", "username", "member_number")) == []


class TestCards:
    @pytest.mark.parametrize(
        ("said", "last"),
        [
            (
                (agent("Which card would you like the refund on?"), customer("the one that ends with 0077 please")),
                "0077",
            ),
            ((agent("Welche Karte haben Sie benutzt?"), customer("die visa, die auf 1358 endet")), "1358"),
            ((customer("meine Kreditkarte, Endziffern 5678, wurde belastet"),), "5678"),
            ((customer("ma CB qui se termine par 1234 est bloquée"),), "1234"),
            ((agent("¿Qué tarjeta usó?"), customer("la que termina en 1234")), "1234"),
            ((customer("de kaart die op 1234 eindigt is geblokkeerd"),), "1234"),
            ((customer("the card that ends 4455 was charged twice"),), "4455"),
            ((customer("My debit card (ending 6634) was charged twice"),), "6634"),
        ],
    )
    def test_a_cards_last_digits(self, said, last: str):
        assert facts(*said) == [("card", last)]

    def test_last_digits_without_a_card_word_or_a_card_request_stay_an_account(self):
        assert facts(customer("the one that ends with 0077 please")) == [("account", "0077")]


class TestIdentifiersByTheirLabel:
    @pytest.mark.parametrize(
        ("text", "fact"),
        [
            ("mi número de afiliada es 7788123", ("member_number", "7788123")),
            ("mi número de socia: 5512309", ("member_number", "5512309")),
            ("mon numéro d'adhérente c'est 4471203", ("member_number", "4471203")),
            ("mon numéro client c'est 5520187", ("customer_id", "5520187")),
            ("my incident number is INC0033419 and nothing has happened", ("ticket", "INC0033419")),
            ("j'ai un numéro d'incident : INC0042211", ("ticket", "INC0042211")),
            ("Störungsnummer 471122, das Internet geht wieder nicht", ("ticket", "471122")),
            ("mijn meldingsnummer is 2024-5512", ("ticket", "2024-5512")),
            ("the account for the flat is 40021178", ("account", "40021178")),
            ("das Konto für die Miete ist 12345678", ("account", "12345678")),
            ("le compte de l'association est 11223344", ("account", "11223344")),
            ("het klantnummer voor de zaak is 5520199", ("customer_id", "5520199")),
            ("mon numéro d'adhérente est le 3390127", ("member_number", "3390127")),
            ("mi número de afiliada es el 22019934", ("member_number", "22019934")),
            ("meine Kundennummer ist die 7712034", ("customer_id", "7712034")),
            ("my contract number is 500223311", ("account", "500223311")),
            ("el contrato del gas es 500223399", ("account", "500223399")),
            ("username on the portal is j.okafor_88", ("username", "j.okafor_88")),
            ("mein Benutzername bei der App ist h.schulz84", ("username", "h.schulz84")),
            ("mon identifiant sur le site est claire.b2", ("username", "claire.b2")),
            ("mi usuario en la app es m.garcia_77", ("username", "m.garcia_77")),
            ("mijn gebruikersnaam op de website is pieter_vd_berg", ("username", "pieter_vd_berg")),
            ("my account at Barclays is 40021178", ("account", "40021178")),
        ],
    )
    def test_a_labelled_code(self, text: str, fact: tuple[str, str]):
        assert facts(customer(text)) == [fact]

    def test_a_level_then_the_number_of_its_membership(self):
        said = facts(customer("I'm a platinum member, number PLT-778812"))
        assert said == [("member_level", "platinum"), ("member_number", "PLT-778812")]

    def test_a_card_asked_for_is_named_by_its_last_digits(self):
        assert facts(agent("What's your library card number?"), customer("LB-0043312")) == [
            ("member_number", "LB-0043312")
        ]
        assert facts(agent("Which card?"), customer("LB-55")) == []
        assert facts(agent("Which card is it?"), customer("the visa, 4821")) == [("card", "4821")]

    def test_an_incident_asked_for_is_a_ticket(self):
        assert facts(agent("¿Tiene número de incidencia?"), customer("sí, INC0051277")) == [("ticket", "INC0051277")]

    @pytest.mark.parametrize(
        ("text", "order"),
        [
            ("ma commande numéro 55120934 n'est pas arrivée", "55120934"),
            ("meine Bestellung Nummer 40029381 ist nicht da", "40029381"),
            ("mijn bestelling nummer 30041122 is nog niet binnen", "30041122"),
            ("mi pedido número 88120455 llegó tarde", "88120455"),
        ],
    )
    def test_a_number_word_after_a_label_names_no_phone(self, text: str, order: str):
        assert [(e.kind, e.value) for e in ledger(customer(text))] == [("order", order)]

    @pytest.mark.parametrize(
        ("text", "labels"),
        [
            ("tengo dos contratos: la cuenta de la luz es 700112233 y la cuenta del agua 700112299", ["luz", "agua"]),
            ("I have two accounts: home is 40021178 and business is 40021190", ["home", "business"]),
        ],
    )
    def test_what_a_label_is_of_labels_the_value(self, text: str, labels: list[str]):
        found = ledger(customer(text))
        assert [(e.kind, e.label) for e in found] == [("account", label) for label in labels]
        assert len(current_facts(found)) == 2


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


class TestWhatACodeIsCalled:
    """The noun phrase before a code is its label: the label of its kind, the words before it back
    to a determiner, and what it is of after it; words of number are no part of it."""

    @pytest.mark.parametrize(
        ("text", "kind", "value", "label"),
        [
            ("I have a billing ticket 30417", "ticket", "30417", "billing ticket"),
            ("my support case 88213 is still open", "case", "88213", "support case"),
            ("claim no. 5521-77 was rejected", "case", "5521-77", "claim"),
            ("I'm calling about the billing ticket 30417", "ticket", "30417", "billing ticket"),
            ("ich habe ein Abrechnungsticket 30417", "ticket", "30417", "Abrechnungsticket"),
            ("mein Support-Ticket 30417 ist offen", "ticket", "30417", "Support-Ticket"),
            ("j'ai un ticket de facturation 30417", "ticket", "30417", "ticket de facturation"),
            ("tengo un ticket de facturación 30417", "ticket", "30417", "ticket de facturación"),
            ("mi caso de soporte 88213 sigue abierto", "case", "88213", "caso de soporte"),
            ("ik heb een factuurticket 30417", "ticket", "30417", "factuurticket"),
            ("mijn supportticket 30417 staat nog open", "ticket", "30417", "supportticket"),
        ],
    )
    def test_the_misses(self, text: str, kind: str, value: str, label: str):
        assert [(e.kind, e.value, e.label) for e in ledger(customer(text))] == [(kind, value, label)]

    @pytest.mark.parametrize(
        ("text", "kind", "value", "label"),
        [
            # insurance
            ("my insurance claim number is 5521-77", "case", "5521-77", "insurance claim"),
            ("mein Schadensfall 5521-77", "case", "5521-77", "Schadensfall"),
            ("mon dossier sinistre 5521-77 est bloqué", "case", "5521-77", "dossier sinistre"),
            ("el número de siniestro es 5521-77", "case", "5521-77", "siniestro"),
            ("mijn schadeclaim 5521-77", "case", "5521-77", "schadeclaim"),
            # a hotel booking
            ("my hotel booking reference is HX4471", "reference", "HX4471", "hotel booking reference"),
            ("meine Hotelbuchung HX4471", "reference", "HX4471", "Hotelbuchung"),
            ("ma réservation d'hôtel HX4471", "reference", "HX4471", "réservation d'hôtel"),
            ("mi reserva de hotel HX4471", "reference", "HX4471", "reserva de hotel"),
            ("mijn hotelboeking HX4471", "reference", "HX4471", "hotelboeking"),
            # a parcel
            ("the parcel tracking number is 00340434161234567890", "order", "00340434161234567890", "parcel tracking"),
            ("Sendungsnummer 00340434161234567890", "order", "00340434161234567890", "Sendungsnummer"),
            # a phone contract
            ("my phone contract 7712034 ends soon", "account", "7712034", "phone contract"),
            ("mein Handyvertrag 7712034 läuft aus", "account", "7712034", "Handyvertrag"),
            ("mon contrat de téléphone 7712034", "account", "7712034", "contrat de téléphone"),
            ("mi contrato de móvil 7712034", "account", "7712034", "contrato de móvil"),
            ("mijn telefooncontract 7712034", "account", "7712034", "telefooncontract"),
        ],
    )
    def test_in_other_domains(self, text: str, kind: str, value: str, label: str):
        assert [(e.kind, e.value, e.label) for e in ledger(customer(text))] == [(kind, value, label)]

    @pytest.mark.parametrize(
        ("text", "kind"),
        [
            # the kind's own name says nothing more
            ("ticket number 30417 please", "ticket"),
            ("my order number is 5512345", "order"),
            ("meine Kundennummer ist K-558812", "customer_id"),
            ("mon numéro de dossier 5521-77", "case"),
            ("mi número de caso es 88213", "case"),
            ("mijn zaak 88213", "case"),
            ("my account number is 11223344", "account"),
            # the nouns an agent asks for the kind by
            ("booking ref BK-77812, can we add travel insurance?", "reference"),
            ("meine Bestellung 48213377 ist nicht angekommen", "order"),
            # no determiner: the words before the label are no part of its phrase
            ("Can I cancel order 5521-889 and get a refund?", "order"),
            ("I was given ticket number 58213 last week", "ticket"),
            ("ich bin Kundin und hab Ticket 33814 offen", "ticket"),
            # a kind held once: its label word alone is the kind itself
            ("acct 11223344", "account"),
            ("my IBAN is DE89370400440532013000", "account"),
        ],
    )
    def test_no_label(self, text: str, kind: str):
        assert [(e.kind, e.label) for e in ledger(customer(text))] == [(kind, "")]

    @pytest.mark.parametrize("text", ["mein Mietvertrag 2019 ist ausgelaufen", "mijn huurcontract 2019 is verlopen"])
    def test_a_year_after_a_compound_is_no_code(self, text: str):
        assert ledger(customer(text)) == ()

    def test_a_label_of_several_values_is_still_the_word_before_each(self):
        found = ledger(customer("two tickets: billing 30417 and outage 30418"))
        assert [(e.value, e.label) for e in found] == [("30417", "billing"), ("30418", "outage")]

    def test_two_contracts_are_two_current_values(self):
        found = ledger(customer("my phone contract 7712034 and my broadband contract 7712099"))
        assert [(e.value, e.label) for e in current_facts(found)] == [
            ("7712034", "phone contract"),
            ("7712099", "broadband contract"),
        ]

    def test_a_corrected_code_keeps_its_label(self):
        found = ledger(customer("my support case 88213 is still open"), agent("Let me look."), customer("sorry, 88231"))
        assert [(e.kind, e.value, e.label) for e in current_facts(found)] == [("case", "88231", "support case")]


class TestIbans:
    @pytest.mark.parametrize(
        ("text", "account"),
        [
            ("my IBAN is DE89 3704 0044 0532 0130 00", "DE89 3704 0044 0532 0130 00"),
            ("IBAN: GB82 WEST 1234 5698 7654 32", "GB82 WEST 1234 5698 7654 32"),
            ("mon IBAN est FR14 2004 1010 0505 0001 3M02 606", "FR14 2004 1010 0505 0001 3M02 606"),
            ("mi IBAN es ES91 2100 0418 4502 0005 1332", "ES91 2100 0418 4502 0005 1332"),
            ("mijn IBAN is NL91 ABNA 0417 1643 00", "NL91 ABNA 0417 1643 00"),
        ],
    )
    def test_an_iban_is_an_account_by_its_check_digits(self, text: str, account: str):
        assert facts(customer(text), kinds=("account",)) == [("account", account)]

    def test_one_that_fails_its_check_is_an_account_only_after_an_accounts_label(self):
        said = "DE88 3704 0044 0532 0130 00"
        assert facts(customer(f"my IBAN is {said}"), kinds=("account",)) == [("account", said)]
        assert facts(customer(f"the code on the box is {said}"), kinds=("account",)) == []


class TestCodesAreNoDates:
    @pytest.mark.parametrize("text", ["Your customer id is 4711-0815-22.", "Kundennummer 4711-0815-22."])
    def test_a_codes_last_group_and_a_full_stop_are_no_day(self, text: str):
        assert [e.kind for e in extract(text)] == ["customer_id"]
