"""Secrets are not facts to repeat: found by cue and by request, masked before anything is stored or
prompted, recorded in the ledger only as given, flagged in answers and kept out of summaries."""

from __future__ import annotations

import pytest

from appliance.facts import national_ids, secrets, slots
from appliance.facts.checker import check
from appliance.facts.entities import extract
from appliance.facts.ledger import entries
from appliance.types import Turn


def agent(text: str) -> Turn:
    return Turn("s", 0, "agent", text)


class TestByCue:
    @pytest.mark.parametrize(
        ("text", "masked"),
        [
            ("my PIN is 7402", "my PIN is [PIN withheld]"),
            (
                "I just remembered my pin is 9431 or 3941",
                "I just remembered my pin is [PIN withheld] or [PIN withheld]",
            ),
            (
                "Just remembered my PIN: eitehr 3941 or 0314",
                "Just remembered my PIN: eitehr [PIN withheld] or [PIN withheld]",
            ),
            (
                "My card is 4111 1111 1111 1111, CVV 123",
                "My card is [card ending 1111], CVV [card security code withheld]",
            ),
            ("my password is hunter2!", "my password is [password withheld]!"),
            ("Your OTP is 123456.", "Your OTP is [one-time code withheld]."),
            ("the code we sent: 482913", "the code we sent: [one-time code withheld]"),
            ("4539 1488 0343 6467", "[card ending 6467]"),  # no cue, but the Luhn check says card
            # German
            ("Meine PIN ist 7402.", "Meine PIN ist [PIN withheld]."),
            ("meine Geheimzahl lautet 1234", "meine Geheimzahl lautet [PIN withheld]"),
            ("Die TAN lautet 556677", "Die TAN lautet [one-time code withheld]"),
            ("Mein Passwort ist Sommer2024", "Mein Passwort ist [password withheld]"),
            (
                "Die Prüfnummer ist 321, Karte 5500 0000 0000 0004",
                "Die Prüfnummer ist [card security code withheld], Karte [card ending 0004]",
            ),
            # French, Spanish, Dutch
            ("Mon code PIN est 1234", "Mon code PIN est [PIN withheld]"),
            ("mi contraseña es gato99", "mi contraseña es [password withheld]"),
            ("mijn pincode is 8642", "mijn pincode is [PIN withheld]"),
        ],
    )
    def test_masked(self, text: str, masked: str):
        assert secrets.mask(text) == masked

    @pytest.mark.parametrize(
        "text",
        [
            "Jane Doe, account 9931939443153.",  # an account number, whatever its check digit
            "I forgot my PIN. My account number is 12345678",  # the PIN's sentence has no value
            "PIN and account 12345678",  # another label comes first
            "my password is not working",
            "Enter your PIN at 9am",
            "I want a tan 2015 Toyota",  # "TAN" only in capitals
            "Your booking reference is W9945XIS and it cost 114.56 GBP.",
        ],
    )
    def test_not_secrets(self, text: str):
        assert secrets.mask(text) == text


class TestByRequest:
    @pytest.mark.parametrize(
        ("asked", "reply", "masked"),
        [
            ("Right, and your PIN as well please.", "3941", "[PIN withheld]"),
            (
                "Right, and your PIN as well please.",
                "Maybe 9503? or 7402? Or not?",
                "Maybe [PIN withheld]? or [PIN withheld]? Or not?",
            ),
            (
                "I cannot authenticate you without a valid PIN. Can you provide the correct one?",
                "3941",
                "[PIN withheld]",
            ),
            ("What is the security code on the back of the card?", "It's 123", "It's [card security code withheld]"),
            ("Please tell me the code we sent you by SMS.", "482913", "[one-time code withheld]"),
            ("What is your password?", "hunter2", "[password withheld]"),
            ("Wie lautet Ihre PIN, bitte?", "Sie ist 7402.", "Sie ist [PIN withheld]."),
            ("Bitte nennen Sie mir Ihr Passwort.", "Sommer2024", "[password withheld]"),
        ],
    )
    def test_a_bare_reply_to_a_request_is_masked(self, asked: str, reply: str, masked: str):
        assert slots.mask(reply, agent(asked)) == masked

    def test_a_pin_and_an_account_number_asked_at_once(self):
        asked = agent("May I have your full name, account number and PIN please?")
        assert slots.mask("Sarah Brown, 153531981, 9503", asked) == "Sarah Brown, 153531981, [PIN withheld]"

    def test_a_pin_spoken_of_a_few_turns_before(self):
        before = [
            agent("Right, and your PIN as well please."),
            Turn("s", 1, "customer", "I can't remember it at the moment"),
            agent("What was your mother's maiden name?"),
        ]
        masked = slots.mask("Hold on, I think it's either 3100 or 7402 actually.", before)
        assert masked == "Hold on, I think it's either [PIN withheld] or [PIN withheld] actually."
        # a year, an amount or a budget is not a PIN
        assert slots.mask("I was born in 1957 and lost $4500", before) == "I was born in 1957 and lost $4500"

    @pytest.mark.parametrize("reply", ["Thanks!", "thank you.", "Danke!", "Merci.", "Bye"])
    def test_a_bare_thanks_after_a_request_for_a_password_gives_none(self, reply: str):
        assert slots.mask(reply, agent("What is your password?")) == reply
        assert slots.mask("Sommer2024!", agent("What is your password?")) == "[password withheld]!"

    def test_other_requests_mask_nothing(self):
        assert slots.mask("95381901", agent("Can you tell me your account number, please?")) == "95381901"
        assert slots.mask("1593", agent("What is your budget?")) == "1593"

    def test_an_agents_text_is_masked_by_cue_only(self):
        assert (
            slots.mask("Your one-time code is 482913.", role="agent")
            == "Your one-time code is [one-time code withheld]."
        )
        assert slots.mask("3941", agent("your PIN please?"), role="agent") == "3941"

    def test_the_secret_values_of_a_transcript_stored_as_given(self):
        turns = (
            agent("Right, and your PIN as well please."),
            Turn("s", 1, "customer", "3941"),
            Turn("s", 2, "customer", "and my password is hunter2"),
        )
        assert slots.secret_values(turns) == {"3941", "hunter2"}

    def test_a_whole_transcript(self):
        turns = (agent("Right, and your PIN as well please."), Turn("s", 1, "customer", "3941"))
        assert [t.text for t in slots.masked(turns)] == ["Right, and your PIN as well please.", "[PIN withheld]"]


class TestNeverAValue:
    def test_the_ledger_records_that_a_secret_was_given_and_when(self):
        for text in ("my PIN is 7402", secrets.mask("my PIN is 7402")):
            (entry,) = entries([Turn("s", 4, "customer", text)])
            assert (entry.kind, entry.value, entry.turn, entry.slot) == ("secret", "PIN given", 4, "secret=pin")
            assert "7402" not in f"{entry}"

    def test_a_bare_pin_asked_for_is_a_secret_in_the_ledger_too(self):
        (entry,) = entries([agent("Right, and your PIN as well please."), Turn("s", 1, "customer", "3941")])
        assert (entry.kind, entry.value, entry.turn) == ("secret", "PIN given", 1)

    def test_a_full_card_number_is_kept_by_its_last_four_digits(self):
        for text in ("my card number is 4111 1111 1111 1111", secrets.mask("my card number is 4111 1111 1111 1111")):
            (entry,) = entries([Turn("s", 0, "customer", text)])
            assert (entry.kind, entry.norm) == ("card", "1111") and "4111 1111" not in entry.value

    def test_a_secret_in_an_answer_is_always_a_finding(self):
        turns = (Turn("s", 0, "customer", "my PIN is 7402"),)
        result = check(
            "Your PIN is 7402.", ledger=entries(turns), summary="", transcript=turns, question="What's my PIN?"
        )
        assert [(f.entity.kind, f.status) for f in result.findings] == [("secret", "unsupported")]

    def test_the_extractor_names_the_kind_never_the_value(self):
        (e,) = extract("Meine PIN ist 7402")
        assert (e.kind, e.norm) == ("secret", "pin")

    def test_luhn(self):
        assert national_ids.luhn_valid("4111111111111111") and not national_ids.luhn_valid("4111111111111112")
