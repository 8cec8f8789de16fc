"""Slot answers and names without a cue: the agent's request decides what a bare reply carries, and a
customer's name is found however it is given, in English, German and other languages and scripts."""

from __future__ import annotations

import pytest

from appliance.facts import slots
from appliance.facts.ledger import entries, entries_for
from appliance.facts.vocabulary import DEFAULT, Vocabulary
from appliance.types import LedgerEntry, Turn, current_facts


def agent(text: str, index: int = 0) -> Turn:
    return Turn("s", index, "agent", text)


def customer(text: str, index: int = 1) -> Turn:
    return Turn("s", index, "customer", text)


def read(asked: str | None, reply: str) -> list[tuple[str, str]]:
    """(kind, value) of the reply's ledger entries."""
    before = agent(asked) if asked is not None else None
    return [(e.kind, e.value) for e in entries_for(customer(reply), before)]


class TestRequests:
    @pytest.mark.parametrize(
        ("text", "kinds"),
        [
            ("Could I get your full name, please?", {"name"}),
            ("May I have your full name, account number and PIN please?", {"name", "account", "pin"}),
            ("Could you provide your date of birth, please?", {"birthdate"}),
            ("What's the best phone number to reach you on?", {"phone"}),
            ("Can I have your e-mail address?", {"email"}),
            ("And your postcode?", {"postcode"}),
            ("What is your home address?", {"address"}),
            ("Do you have the booking reference?", {"reference"}),
            ("Hello, how can I help?", {"open"}),
            ("Könnten Sie mir bitte Ihr Geburtsdatum nennen?", {"birthdate"}),
            ("Wie lautet Ihre Kontonummer?", {"account"}),
            ("Wie ist Ihr Name, bitte?", {"name"}),
            ("Quel est votre numéro de téléphone ?", {"phone"}),
            ("¿Cuál es su número de pedido?", {"order"}),
            ("Wat is uw postcode?", {"postcode"}),
        ],
    )
    def test_kinds_asked_for(self, text: str, kinds: set[str]):
        assert slots.requested(text) == kinds

    @pytest.mark.parametrize(
        "text",
        [
            "Your account number is 12345678.",  # a statement, not a request
            "What was your mother's maiden name?",  # a security answer, not the customer's name
            "And what was the name of the pet you had as a child?",
            "I can also filter for service provider, driver name, and the car's model.",
        ],
    )
    def test_no_slot(self, text: str):
        assert slots.requested(text) - {"open"} == set()

    def test_a_request_that_points_back(self):
        text = "I cannot authenticate you without a valid PIN. Can you provide the correct one?"
        assert slots.requested(text) == {"pin"}

    def test_configured_cues_replace_a_kind_of_one_language_and_add_new_ones(self):
        cues = {"en": {"name": []}, "it": {"name": ["il suo nome"]}}
        assert slots.requested("Could I get your full name, please?", cues) == set()
        assert slots.requested("Mi può dire il suo nome, per favore?", cues) == {"name"}
        assert slots.requested("Could I get your account number, please?", cues) == {"account"}

    def test_the_compiled_vocabulary_answers_as_the_settings_table(self):
        cues = {"en": {"name": []}, "it": {"name": ["il suo nome"]}}
        vocabulary = Vocabulary.build(request_cues=cues)
        for text in ("Could I get your full name, please?", "Mi può dire il suo nome, per favore?"):
            assert slots.requested(text, vocabulary) == slots.requested(text, cues)
        assert slots.requested("Could I get your full name, please?", DEFAULT) == {"name"}


class TestSlotAnswers:
    @pytest.mark.parametrize(
        ("asked", "reply", "expected"),
        [
            ("Could I get your full name, please?", "Yes, Sarah Brown.", [("name", "Sarah Brown")]),
            ("Could I get your full name, please?", " Katarina Miller", [("name", "Katarina Miller")]),
            ("Could you give me your name, please?", "It's Angela", [("name", "Angela")]),
            ("May I have your name, please?", "Ben...wait friend just texted me", [("name", "Ben")]),
            (
                "Could I get your full name, please?",
                "Katarina Miller, account number is 95381901.",
                [("name", "Katarina Miller"), ("account", "95381901")],
            ),
            ("Could you provide your date of birth, please?", "Sure: 10/31/1986", [("birthdate", "10/31/1986")]),
            ("Can you tell me your account number, please?", "It's 237.", [("account", "237")]),
            ("Can you tell me your account number, please?", "Yeah, it's 93418043810", [("account", "93418043810")]),
            ("What's the best phone number to reach you?", "5551234567", [("phone", "5551234567")]),
            ("And your zip code?", "94103", [("postcode", "94103")]),
            ("Can I have your email address?", "sure, dana.w@example.org", [("email", "dana.w@example.org")]),
            ("What is your booking reference?", "QXKTRBZ", [("reference", "QXKTRBZ")]),
            ("What is your home address?", "12 Mill Road, Cambridge.", [("address", "12 Mill Road, Cambridge")]),
            # German
            ("Wie ist Ihr Name, bitte?", "Ja, Jürgen Groß.", [("name", "Jürgen Groß")]),
            ("Wie lautet Ihre Kontonummer?", "Die ist 4711 0815 99.", []),  # spaced digits are no account
            ("Wie lautet Ihre Kundennummer?", "Klar: 8812345", [("customer_id", "8812345")]),
            (
                "Könnten Sie mir bitte Ihr Geburtsdatum nennen?",
                "Das ist der 3. März 1985",
                [("birthdate", "3. März 1985")],
            ),
            ("Wie lautet Ihre Postleitzahl?", "10115", [("postcode", "10115")]),
        ],
    )
    def test_reply(self, asked: str, reply: str, expected: list[tuple[str, str]]):
        assert read(asked, reply) == expected

    @pytest.mark.parametrize(
        ("asked", "reply"),
        [
            ("What is your name?", " I would like to get the directions from University to Airport at 8am by driving"),
            ("Could I have your name, please?", "Hold on, let me check"),
            ("Could I get your full name, please?", "I'd rather not say."),
            ("Could I get your full name, please?", "Nope."),
            ("Could you provide your date of birth, please?", "I might've just remembered it. Either 9503 or 1596"),
            ("What was your mother's maiden name?", "Miller"),
            ("Where are you departing from?", "New York City."),
            ("Where are you going to?", "Los Angeles"),
        ],
    )
    def test_no_name_or_value_where_there_is_none(self, asked: str, reply: str):
        assert [kind for kind, _ in read(asked, reply) if kind not in ("time", "date")] == []

    def test_a_reply_is_read_only_with_the_agents_turn(self):
        assert read(None, "95381901") == [("number", "95381901")]
        assert [(e.kind, e.value) for e in entries_for(customer("95381901"), customer("account number?", 0))] == [
            ("number", "95381901")
        ]

    def test_entries_pass_each_turn_the_one_before(self):
        turns = [agent("Could I get your full name, please?", 0), customer("Tyler Jones", 1)]
        assert entries(turns) == (LedgerEntry("name", "Tyler Jones", 1, "customer", "name:customer", "tyler jones"),)


class TestNamesWithoutACue:
    @pytest.mark.parametrize(
        ("text", "name"),
        [
            ("Katarina Miller, there has been a transfer I did not make.", "Katarina Miller"),
            ("Hi, Sarah Brown, I'd like to report fraud", "Sarah Brown"),
            ("Oluwaseun Adeyemi here, my card was stolen", "Oluwaseun Adeyemi"),
            ("Hello, this is Tom.", "Tom"),
            ("Name: Siobhán O'Connor", "Siobhán O'Connor"),
            ("my name is Nguyen Van An", "Nguyen Van An"),
            ("Mein Name ist María José García.", "María José García"),
            ("Guten Tag, Jürgen Groß hier.", "Jürgen Groß"),
            ("Hallo, hier spricht Jürgen Groß.", "Jürgen Groß"),
            ("Ich heiße Jan van der Berg.", "Jan van der Berg"),
            ("Меня зовут Иван Петров.", "Иван Петров"),
            ("اسمي محمد أحمد", "محمد أحمد"),
            ("我叫王小明。", "王小明"),
        ],
    )
    def test_the_customers_own_name(self, text: str, name: str):
        facts = [(e.value, e.slot) for e in entries_for(customer(text), agent("Hello, how can I help?"))]
        assert facts == [(name, "name:customer")]

    @pytest.mark.parametrize(
        ("asked", "text"),
        [
            ("Where are you departing from?", "New York City."),
            ("On March 1st? Departing from where?", "Leaving Atlanta."),
            ("Hello, how can I help?", "Good Morning, I need help."),
            ("Hello, how can I help?", "Monday Morning, please."),
            ("Hello, how can I help?", "Hilton Hotel, two nights."),
            ("Hello, how can I help?", "Visa Platinum, it was declined."),
            ("Hello, how can I help?", "Click here to see it."),
        ],
    )
    def test_no_false_names(self, asked: str, text: str):
        assert [e for e in entries_for(customer(text), agent(asked)) if e.kind == "name"] == []

    def test_names_in_non_latin_scripts_after_a_name_request(self):
        assert read("Could I get your full name, please?", "王小明") == [("name", "王小明")]
        assert read("Could I get your full name, please?", "Nguyễn Văn An") == [("name", "Nguyễn Văn An")]

    def test_a_name_spoken_of_is_nobodys_own(self):
        turns = [
            customer("Could I get your full name, please?", 0).__class__("s", 0, "agent", "Your name, please?"),
            customer("Tyler Jones", 1),
            agent("Great, your appointment with Dr. Johnson is booked for you!", 2),
            customer("I just love Dr. Johnson, he always makes me feel comfortable.", 3),
        ]
        ledger = entries(turns)
        assert [(e.value, e.slot) for e in ledger if e.kind == "name"] == [
            ("Tyler Jones", "name:customer"),
            ("Johnson", "name=johnson"),
            ("Johnson", "name=johnson"),
        ]
        names = [e.value for e in current_facts(ledger) if e.slot == "name:customer"]
        assert names == ["Tyler Jones"]


class TestSettings:
    def test_request_cues_are_read_from_the_settings_and_checked(self, tmp_path):
        from appliance.config import load_settings
        from appliance.errors import ConfigError

        from .support import write_config

        settings = load_settings(write_config(tmp_path, '[facts.request_cues.it]\nname = ["il suo nome"]\n'), env={})
        assert slots.requested("Il suo nome, per favore?", settings.facts.request_cues) == {"name"}
        with pytest.raises(ConfigError, match="did you mean 'name'"):
            load_settings(write_config(tmp_path, '[facts.request_cues.en]\nnmae = ["x"]\n'), env={})
        with pytest.raises(ConfigError, match="a cue is empty"):
            load_settings(write_config(tmp_path, '[facts.request_cues.de]\nname = [" "]\n'), env={})
