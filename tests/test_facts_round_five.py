"""Facts as customers type them, round five (issue 26's leftovers): a correction that names no kind
corrects the latest value of its shape. In the built-in languages and in several domains, with
negatives."""

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
