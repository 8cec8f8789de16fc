"""Facts as customers type them, round five (issue 26's leftovers): a correction that names no kind
corrects the latest value of its shape, and a code is labelled with what the customer calls it.
Each in the built-in languages and in several domains, with negatives."""

from __future__ import annotations

import pytest

from appliance.facts.ledger import superseded
from appliance.types import LedgerEntry, current_facts

from .said import agent, customer, ledger


def _current(found: tuple[LedgerEntry, ...], kind: str) -> list[str]:
    return [e.value for e in current_facts(found) if e.kind == kind]


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
        assert _current(found, "card") == ["4401"]
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
        assert _current(ledger(*said), "card") == ["4401"]

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
