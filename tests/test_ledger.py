"""The fact ledger: entries per turn with their slot, and later values superseding earlier ones."""

from __future__ import annotations

from pathlib import Path

from appliance.facts.ledger import entries, entries_for, render, superseded
from appliance.store import Store
from appliance.types import LedgerEntry, Turn, current_facts

from .support import dev_conversations


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
        assert [(e.kind, e.value, e.turn) for e in current_facts(entries(self.turns))] == [
            ("name", "Dana", 1),
            ("case", "55213", 1),
            ("phone", "07700 900124", 2),
        ]

    def test_a_name_is_filed_under_the_person_it_names(self):
        slots = [(e.value, e.speaker, e.slot) for e in entries(self.turns) if e.kind == "name"]
        assert slots == [("Dana", "customer", "name:customer"), ("Dana", "agent", "name:customer")]

    def test_a_shorter_form_of_a_name_does_not_replace_it(self):
        turns = (Turn("s", 0, "customer", "My name is Dana Whitfield."), Turn("s", 1, "agent", "Thank you, Dana."))
        assert [e.value for e in current_facts(entries(turns))] == ["Dana Whitfield"]

    def test_superseded(self):
        assert [e.value for e in superseded(entries(self.turns))] == ["07700 900123"]

    def test_two_bookings_both_stay_current(self):
        ledger = entries(transcript("multiwoz21:MUL0036"))
        refs = [e.value for e in current_facts(ledger) if e.kind == "reference"]
        assert refs == ["W9945XIS", "RVESWV8I"]

    def test_repeating_a_value_moves_it_to_its_latest_mention(self):
        ledger = entries(transcript("multiwoz21:MUL0036"))
        taxi = [e for e in current_facts(ledger) if e.value == "07404779442"]
        assert [e.turn for e in taxi] == [17]
        assert [e.turn for e in ledger if e.value == "07404779442"] == [15, 17]

    def test_a_corrected_rate_replaces_the_first(self):
        turns = (
            Turn("s", 0, "agent", "What rate did the advisor quote you?"),
            Turn("s", 1, "customer", "She said 2.5% fixed."),
            Turn("s", 2, "customer", "sorry, I meant 2,4 %"),
        )
        ledger = entries(turns)
        assert [(e.kind, e.norm) for e in ledger] == [("percent", "2.5"), ("percent", "2.4")]
        assert [e.value for e in current_facts(ledger)] == ["2,4 %"]

    def test_render(self):
        assert render(entries(self.turns)[:1]) == "- phone: 07700 900123 (turn 0, customer)"


def fact(kind: str, value: str, turn: int, slot: str = "", norm: str = "") -> LedgerEntry:
    return LedgerEntry(kind, value, turn, "customer", slot=slot, norm=norm)


class TestCurrentFacts:
    """The one rule of which entries are current, shared by the ledger, the prompt and the checker."""

    def test_the_latest_of_each_slot_oldest_first(self):
        ledger = [
            fact("phone", "01223 555111", 0, "phone:customer"),
            fact("reference", "AB12CD", 1, "reference=ab12cd"),
            fact("phone", "01223 555999", 5, "phone:customer"),
        ]
        assert current_facts(ledger) == (ledger[1], ledger[2])

    def test_entries_without_a_slot_stand_for_themselves_by_kind_and_norm(self):
        ledger = [
            fact("reference", "AB12CD", 1, norm="ab12cd"),
            fact("reference", "XY99ZZ", 2, norm="xy99zz"),
            fact("amount", "AB12CD", 3),  # same text, another kind: its own fact (keyed by value, no norm)
            fact("reference", "ab12cd", 4, norm="ab12cd"),  # the first one again: moves to its latest mention
        ]
        assert [(e.kind, e.value, e.turn) for e in current_facts(ledger)] == [
            ("reference", "XY99ZZ", 2),
            ("amount", "AB12CD", 3),
            ("reference", "ab12cd", 4),
        ]

    def test_a_name_restated_in_part_keeps_the_full_name_at_its_own_turn(self):
        ledger = [
            fact("name", "Dana Whitfield", 0, "name:customer", "dana whitfield"),
            fact("reference", "AB12CD", 1, "reference=ab12cd", "ab12cd"),
            fact("name", "Dana", 2, "name:customer", "dana"),
        ]
        assert current_facts(ledger) == (ledger[0], ledger[1])

    def test_a_different_name_replaces_it(self):
        ledger = [
            fact("name", "Dana Whitfield", 0, "name:customer", "dana whitfield"),
            fact("name", "Dana Smith", 2, "name:customer", "dana smith"),
        ]
        assert current_facts(ledger) == (ledger[1],)

    def test_the_latest_turn_wins_whatever_the_order_given_and_a_turn_keeps_its_order(self):
        ledger = [
            fact("phone", "07700 900124", 2, "phone:customer"),
            fact("phone", "07700 900123", 0, "phone:customer"),
            fact("date", "Monday", 1, "date=monday"),
            fact("time", "9:30", 1, "time=9:30"),
        ]
        assert [e.value for e in current_facts(ledger)] == ["Monday", "9:30", "07700 900124"]


def test_a_signature_whose_words_another_finder_took_is_not_weighed():
    # The reading may point at a signature no entity starts at any more: that is no signature, not a crash.
    from appliance.facts import ledger, slots

    prior = [fact("name", "Dana Whitfield", 0, "name:customer", "dana whitfield")]
    assert ledger._signs_another(slots.Reading((), frozenset(), signed=12), prior) is False


class TestStored:
    def test_labels_and_subjects_are_stored_and_rows_from_before_read(self, tmp_path: Path):
        store = Store.open(tmp_path / "a.db")
        session = store.create_session(policy="rolling")
        text = "I have two accounts: checking 11112222 and savings 33334444."
        said = entries((Turn(session.id, 0, "customer", text),))
        store.append_turn(session.id, "customer", text, ledger=said)
        store.db.execute(
            "INSERT INTO ledger (session_id, turn, speaker, kind, slot, value, norm) "
            "VALUES (?, 0, 'customer', 'phone', 'phone:customer', '0161 496 0000', '01614960000')",
            [session.id],
        )  # a row as the schema before m006 wrote it
        stored = store.ledger(session.id)
        assert [(e.value, e.label) for e in stored] == [
            ("11112222", "checking"),
            ("33334444", "savings"),
            ("0161 496 0000", ""),
        ]
        assert stored[:2] == said
        store.close()
