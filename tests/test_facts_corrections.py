"""Corrections: which earlier value a corrected one replaces, by the cue, the kind named, the value's
shape and what the agent read back, in every language."""

from __future__ import annotations

import pytest

from appliance.facts.ledger import superseded
from appliance.types import current_facts

from .said import agent, current, customer, facts, ledger


class TestCorrections:
    @pytest.mark.parametrize(
        ("said", "old", "new", "kind"),
        [
            (
                (
                    agent("What is your account number?"),
                    customer("It's 12345678."),
                    agent("Thank you, one moment please."),
                    customer("Sorry, I gave you the wrong one, it's 12345679."),
                ),
                "12345678",
                "12345679",
                "account",
            ),
            ((customer("my customer id is 55120, no wait, 55210"),), "55120", "55210", "customer_id"),
            (
                (
                    customer("my phone number is 07911 123456"),
                    agent("So that's 07911 123465, correct?"),
                    customer("No, it's 07911 123456."),
                ),
                "07911 123465",
                "07911 123456",
                "phone",
            ),
            (
                (
                    customer("Meine Kontonummer ist 44556677."),
                    agent("Danke."),
                    customer("Entschuldigung, ich meinte 44556678."),
                ),
                "44556677",
                "44556678",
                "account",
            ),
            (
                (
                    agent("Wie lautet Ihr Benutzername?"),
                    customer("hmueller"),
                    agent("Danke."),
                    customer("Korrektur: hmueller2"),
                ),
                "hmueller",
                "hmueller2",
                "username",
            ),
            (
                (
                    customer("Mon numéro de compte est 99001122."),
                    agent("Merci."),
                    customer("Pardon, je me suis trompé, c'est 99001123."),
                ),
                "99001122",
                "99001123",
                "account",
            ),
            (
                (
                    customer("Mi número de cuenta es 55667788."),
                    agent("Gracias."),
                    customer("Perdón, quise decir 55667789."),
                ),
                "55667788",
                "55667789",
                "account",
            ),
            (
                (
                    agent("Wat is uw klantnummer?"),
                    customer("4455667"),
                    agent("Dank u."),
                    customer("correctie: 4455668"),
                ),
                "4455667",
                "4455668",
                "customer_id",
            ),
        ],
    )
    def test_the_new_value_is_current_and_the_old_one_stored_superseded(self, said, old: str, new: str, kind: str):
        ledger_ = ledger(*said)
        assert [e.value for e in current_facts(ledger_) if e.kind == kind] == [new]
        assert old in [e.value for e in superseded(ledger_)]

    @pytest.mark.parametrize(
        "said",
        [
            (
                customer("My account is 11223344."),
                agent("Thanks."),
                customer("Sorry to bother you, do you open on Sunday?"),
            ),
            (
                customer("My account is 11223344."),
                agent("Thanks."),
                customer("Actually I also have a savings account, 99887766"),
            ),
            (
                customer("Mein Konto ist 11223344."),
                agent("Danke."),
                customer("Entschuldigung, ich habe noch ein Konto: 99887766"),
            ),
            (
                customer("Mi cuenta es 11223344."),
                agent("Gracias."),
                customer("Perdón, también tengo otra cuenta: 99887766"),
            ),
        ],
    )
    def test_no_correction_where_a_value_is_another_one(self, said):
        assert superseded(ledger(*said)) == ()

    def test_a_number_of_another_length_is_no_correction_of_an_account(self):
        said = (customer("My account is 11223344."), agent("Thanks."), customer("Sorry, my order is 5521."))
        assert [e.value for e in current_facts(ledger(*said)) if e.kind == "account"] == ["11223344"]


class TestCorrectionsInEveryLanguage:
    @pytest.mark.parametrize(
        ("said", "old", "new", "kind"),
        [
            ((customer("username is daniel_k88... sorry i meant daniel_k89"),), "daniel_k88", "daniel_k89", "username"),
            (
                (customer("my name is anna schmidt"), agent("Thanks."), customer("oops typo, its anna schmitt")),
                "anna schmidt",
                "anna schmitt",
                "name",
            ),
            ((customer("I'm a silver member, correction: gold since last month"),), "silver", "gold", "member_level"),
            ((customer("Mein Name ist Maier, Entschuldigung, Meier"),), "Maier", "Meier", "name"),
            (
                (
                    agent("Can I have the ticket number?"),
                    customer("TCK-88120"),
                    agent("I can't find TCK-88120 in our system."),
                    customer("actually it's TCK-88210, sorry"),
                ),
                "TCK-88120",
                "TCK-88210",
                "ticket",
            ),
            (
                (
                    agent("Ihre Vertragskontonummer bitte."),
                    customer("Die ist 300418862."),
                    customer("Entschuldigung, ich meinte 300418826."),
                ),
                "300418862",
                "300418826",
                "account",
            ),
            ((customer("my account is 12345678, make that 12345687"),), "12345678", "12345687", "account"),
            ((customer("my customer number was 5512, now it's 5521"),), "5512", "5521", "customer_id"),
            (
                (agent("¿Su nombre de usuario?"), customer("lgarcia"), customer("perdón, es lgarcia_2")),
                "lgarcia",
                "lgarcia_2",
                "username",
            ),
        ],
    )
    def test_the_new_value_is_current_and_the_old_one_superseded(self, said, old: str, new: str, kind: str):
        ledger_ = ledger(*said)
        assert [e.value for e in current_facts(ledger_) if e.kind == kind and e.speaker == "customer"] == [new]
        assert old in [e.value for e in superseded(ledger_)]

    def test_a_ticket_the_customer_gave_is_corrected_like_their_own_values(self):
        said = (agent("Quel est votre numéro de ticket ?"), customer("INC-5512"), customer("pardon, c'est INC-5521"))
        ledger_ = ledger(*said)
        assert [e.value for e in current_facts(ledger_) if e.kind == "ticket"] == ["INC-5521"]
        assert [e.value for e in superseded(ledger_)] == ["INC-5512"]

    def test_a_value_with_a_label_of_its_own_corrects_no_other_kind(self):
        said = (customer("My order is 12345678."), agent("Thanks."), customer("Sorry, my account is 12345679."))
        assert superseded(ledger(*said)) == ()

    def test_a_name_after_a_cue_needs_a_name_given_before(self):
        said = (customer("My account is 11223344."), agent("Thanks."), customer("sorry, what time do you open?"))
        assert facts(*said, kinds=("name",)) == []


class TestCorrectionsOfAReadBack:
    @pytest.mark.parametrize(
        ("said", "kind", "old", "new"),
        [
            (
                ("my customer id is KD77120", "Thanks, so that's KD71120?", "no, KD77120"),
                "customer_id",
                "KD71120",
                "KD77120",
            ),
            (
                ("mein Ticket ist TK-55012", "Ich habe TK-55021, richtig?", "nein, TK-55012"),
                "ticket",
                "TK-55021",
                "TK-55012",
            ),
            (
                ("mon numéro client est 5512045", "Donc 5512054 ?", "non, c'est 5512045"),
                "customer_id",
                "5512054",
                "5512045",
            ),
            (
                ("mi número de socio es 3308812", "¿Es el 3308821?", "no, 3308812"),
                "member_number",
                "3308821",
                "3308812",
            ),
            (("mijn klantnummer is 5520187", "Dus 5520178?", "nee, 5520187"), "customer_id", "5520178", "5520187"),
        ],
    )
    def test_a_code_read_back_wrong_is_superseded(self, said: tuple[str, str, str], kind: str, old: str, new: str):
        found = ledger(customer(said[0]), agent(said[1]), customer(said[2]))
        assert [(e.kind, e.value) for e in superseded(found)] == [(kind, old)]
        assert [(e.kind, e.value) for e in current_facts(found)] == [(kind, new)]

    @pytest.mark.parametrize(
        ("asked", "reply", "old", "new"),
        [
            ("Is your username kmiller?", "no, it's kmiller1", "kmiller", "kmiller1"),
            ("Ist Ihr Benutzername hschulz?", "nein, hschulz84", "hschulz", "hschulz84"),
        ],
    )
    def test_a_handle_asked_about_and_denied(self, asked: str, reply: str, old: str, new: str):
        found = ledger(agent(asked), customer(reply))
        assert [(e.kind, e.value) for e in superseded(found)] == [("username", old)]
        assert [(e.kind, e.value) for e in current_facts(found)] == [("username", new)]

    def test_a_label_word_is_no_handle(self):
        assert facts(agent("What's your login username?"), customer("jnguyen2 is the username")) == [
            ("username", "jnguyen2")
        ]

    def test_a_new_code_stated_by_the_agent_replaces_nothing(self):
        found = ledger(customer("my ticket is INC0033419"), agent("Your new ticket is INC0033420. Anything else?"))
        assert superseded(found) == () and len(current_facts(found)) == 2

    @pytest.mark.parametrize(
        ("asked", "reply", "old", "new"),
        [
            (
                "I have the rental under Daniel Okafor, is that right?",
                "no its Daniela Okafor",
                "Daniel Okafor",
                "Daniela Okafor",
            ),
            ("Ihr Name ist Jana Novak, richtig?", "nein, Jana Nováková", "Jana Novak", "Jana Nováková"),
            ("Votre nom est Luc Petit, c'est bien ça ?", "non, c'est Lucie Petit", "Luc Petit", "Lucie Petit"),
        ],
    )
    def test_a_name_read_back_wrong_is_superseded(self, asked: str, reply: str, old: str, new: str):
        found = ledger(agent(asked), customer(reply))
        assert [e.value for e in superseded(found)] == [old]
        assert [e.value for e in current_facts(found)] == [new]


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


class TestACorrectionThatNamesNoKind:
    """A value after a correction cue with no word of a kind before it corrects the latest value of
    its shape (a card's four last digits, a date, an amount), not a value of another kind."""

    @pytest.mark.parametrize(
        ("given", "correction"),
        [
            ("my card ending 4410 was declined", "correction: ending 4401"),
            ("my card ending 4410 was declined", "sorry, it ends in 4401 not 4410"),
            ("die Karte mit der Endung 4410 wurde abgelehnt", "Korrektur: Endung 4401"),
            ("die Karte mit der Endung 4410 wurde abgelehnt", "Entschuldigung, sie endet auf 4401, nicht 4410"),
            ("ma carte qui finit par 4410 a été refusée", "correction : se termine par 4401"),
            ("ma carte qui finit par 4410 a été refusée", "pardon, elle finit par 4401"),
            ("mi tarjeta terminada en 4410 fue rechazada", "perdón, termina en 4401, no en 4410"),
            ("mijn kaart eindigend op 4410 werd geweigerd", "sorry, hij eindigt op 4401, niet 4410"),
            ("mijn kaart eindigend op 4410 werd geweigerd", "correctie: eindigend op 4401"),
        ],
    )
    def test_a_cards_last_digits_correct_the_card(self, given: str, correction: str):
        found = ledger(customer(given), agent("Thanks."), customer(correction))
        assert [(e.kind, e.value) for e in found] == [("card", "4410"), ("card", "4401")]
        assert current(found, "card") == ["4401"]
        assert [e.value for e in superseded(found)] == ["4410"]

    def test_in_the_turn_that_gave_the_card(self):
        found = ledger(customer("the card ending 4410, sorry, it ends in 4401"))
        assert [(e.kind, e.value) for e in found] == [("card", "4410"), ("card", "4401")]
        assert [e.value for e in superseded(found)] == ["4410"]

    def test_a_card_the_agent_read_back(self):
        said = (
            customer("my card ending 4410 was declined"),
            agent("So that's the card ending in 4410?"),
            customer("no, ending 4401"),
        )
        assert current(ledger(*said), "card") == ["4401"]

    def test_a_date_the_agent_proposed_just_before(self):
        said = (
            customer("I need the car until the 9th of this month."),
            agent("Is there anything else?"),
            customer("is there a bus from Vancouver?"),
            agent("Leaving on March 3rd?"),
            customer("Actually, the 2nd of this month."),
        )
        found = ledger(*said)
        assert [e.value for e in superseded(found)] == ["March 3rd"]
        assert {"9th", "2nd"} <= {e.value for e in current_facts(found)}

    @pytest.mark.parametrize(
        ("given", "correction", "kind", "old", "new"),
        [
            # a dentist's appointment
            ("can I move my appointment to 12/03/2027", "sorry, 13/03/2027", "date", "12/03/2027", "13/03/2027"),
            # a refund
            ("I was charged 45.00 EUR for the parcel", "sorry, it was 54.00 EUR", "amount", "45.00 EUR", "54.00 EUR"),
            # a phone contract's number, retyped
            ("my phone contract 7712034 ends soon", "sorry, 7712043", "account", "7712034", "7712043"),
            # a hotel booking's code
            ("my hotel booking is HX4471", "oops, HX4417", "reference", "HX4471", "HX4417"),
        ],
    )
    def test_a_value_of_the_same_shape_in_other_domains(self, given: str, correction: str, kind, old, new):
        found = ledger(customer(given), agent("Let me check."), customer(correction))
        assert new in [e.value for e in current_facts(found) if e.kind == kind]
        assert old in [e.value for e in superseded(found)]

    @pytest.mark.parametrize(
        ("given", "then"),
        [
            # another kind named: a new account, the card untouched
            ("my card ending 4410 was declined", "sorry, my account ending 5521 is fine"),
            ("my card ending 4410 was declined", "Entschuldigung, mein Konto mit der Endung 5521 ist in Ordnung"),
            # one more, not a replacement
            ("my card ending 4410 was declined", "sorry, I also have one ending 4401"),
            # a value of another shape
            ("my card ending 4410 was declined", "sorry, my appointment is on 12/03/2027"),
            ("my order 55123 was late", "sorry, it ends in 4401"),
            # a date of another kind named: a date of birth corrects no appointment
            ("my appointment is on 12/03/2027", "sorry, my date of birth is 13/03/1990"),
            # a plain number (a meter reading) is corrected by no number after "sorry"
            ("the meter reads 45123 today", "sorry, I'll send the photo of 45132 tomorrow"),
            # no cue: a second parcel's tracking number is another value
            ("my parcel tracking number is 1Z999AA10123456784", "and the other one is 1Z999AA10123456785"),
        ],
    )
    def test_a_new_fact_stays_new(self, given: str, then: str):
        found = ledger(customer(given), agent("Thanks."), customer(then))
        assert superseded(found) == ()

    def test_the_new_kind_named_is_kept(self):
        found = ledger(customer("my card ending 4410"), agent("Thanks."), customer("sorry, my account ending 5521"))
        assert [(e.kind, e.value) for e in current_facts(found)] == [("card", "4410"), ("account", "5521")]
