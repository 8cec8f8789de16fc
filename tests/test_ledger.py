"""The fact ledger: entries per turn with their slot, and later values superseding earlier ones."""

from __future__ import annotations

from appliance.facts.ledger import current, entries, entries_for, render, superseded
from appliance.types import LedgerEntry, Turn

from .conftest import dev_conversations


def transcript(conversation_id: str) -> tuple[Turn, ...]:
    conv = next(c for c in dev_conversations() if c["id"] == conversation_id)
    return tuple(Turn(conversation_id, i, t["role"], t["text"]) for i, t in enumerate(conv["turns"]))


class TestEntriesForATurn:
    def test_real_agent_turn(self):
        turn = transcript("multiwoz21:MUL0036")[5]
        assert entries_for(turn) == (
            LedgerEntry("date", "Saturday", 5, "agent", "date=saturday", "saturday"),
            LedgerEntry("reference", "W9945XIS", 5, "agent", "reference=w9945xis", "w9945xis"),
        )

    def test_customer_personal_facts_have_one_slot_each(self):
        turn = Turn("s", 0, "customer", "Hi, my name is Dana Whitfield, my number is 07700 900123.")
        assert [(e.kind, e.slot) for e in entries_for(turn)] == [("name", "name:customer"), ("phone", "phone:customer")]

    def test_agent_phone_numbers_are_many_valued(self):
        turn = Turn("s", 3, "agent", "The hotel is on 01223 842725 and the taxi on 07404779442.")
        assert [e.slot for e in entries_for(turn)] == ["phone=01223842725", "phone=07404779442"]


class TestSupersede:
    turns = (
        Turn("s", 0, "customer", "My phone is 07700 900123 and my name is Dana."),
        Turn("s", 1, "agent", "Thanks Dana, your case number is 55213."),
        Turn("s", 2, "customer", "Sorry, my phone is actually 07700 900124."),
    )

    def test_both_values_stay_stored(self):
        phones = [e.value for e in entries(self.turns) if e.kind == "phone"]
        assert phones == ["07700 900123", "07700 900124"]

    def test_current_holds_the_latest_value_of_a_slot_in_order_of_mention(self):
        assert [(e.kind, e.value, e.turn) for e in current(entries(self.turns))] == [
            ("name", "Dana", 1),
            ("case", "55213", 1),
            ("phone", "07700 900124", 2),
        ]

    def test_a_name_is_filed_under_the_person_it_names(self):
        slots = [(e.value, e.speaker, e.slot) for e in entries(self.turns) if e.kind == "name"]
        assert slots == [("Dana", "customer", "name:customer"), ("Dana", "agent", "name:customer")]

    def test_a_shorter_form_of_a_name_does_not_replace_it(self):
        turns = (Turn("s", 0, "customer", "My name is Dana Whitfield."), Turn("s", 1, "agent", "Thank you, Dana."))
        assert [e.value for e in current(entries(turns))] == ["Dana Whitfield"]

    def test_superseded(self):
        assert [e.value for e in superseded(entries(self.turns))] == ["07700 900123"]

    def test_two_bookings_both_stay_current(self):
        ledger = entries(transcript("multiwoz21:MUL0036"))
        refs = [e.value for e in current(ledger) if e.kind == "reference"]
        assert refs == ["W9945XIS", "RVESWV8I"]

    def test_repeating_a_value_moves_it_to_its_latest_mention(self):
        ledger = entries(transcript("multiwoz21:MUL0036"))
        taxi = [e for e in current(ledger) if e.value == "07404779442"]
        assert [e.turn for e in taxi] == [17]
        assert [e.turn for e in ledger if e.value == "07404779442"] == [15, 17]

    def test_render(self):
        assert render(entries(self.turns)[:1]) == "- phone: 07700 900123 (turn 0, customer)"
