"""Facts as customers type them, round four (issue 26): mechanisms that depend less on the exact
words, each in the built-in languages with positives and negatives. The cases are new wordings, not
the blind table's."""

from __future__ import annotations

import pytest

from appliance.facts.ledger import entries
from appliance.types import LedgerEntry, Turn

SCORED = ("name", "username", "customer_id", "member_number", "member_level", "ticket", "phone", "account", "card")


def ledger(*said: tuple[str, str]) -> tuple[LedgerEntry, ...]:
    return entries(tuple(Turn("s", i, role, text) for i, (role, text) in enumerate(said)))  # type: ignore[arg-type]


def facts(*said: tuple[str, str], kinds: tuple[str, ...] = SCORED) -> list[tuple[str, str]]:
    return [(e.kind, e.value) for e in ledger(*said) if e.kind in kinds]


def customer(text: str) -> tuple[str, str]:
    return ("customer", text)


def agent(text: str) -> tuple[str, str]:
    return ("agent", text)


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
