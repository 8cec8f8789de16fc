"""The entity check: real quoting answers pass, altered and invented facts are found, with repairs."""

from __future__ import annotations

import json

import pytest

from appliance.facts.checker import check, redact, strict_instruction
from appliance.facts.ledger import entries
from appliance.types import CheckResult, Turn, current_facts

from .said import agent, customer
from .support import SHARED_DATA, dev_conversations


def transcript(conversation_id: str) -> tuple[Turn, ...]:
    conv = next(c for c in dev_conversations() if c["id"] == conversation_id)
    return tuple(Turn(conversation_id, i, t["role"], t["text"]) for i, t in enumerate(conv["turns"]))


def check_after(turns: tuple[Turn, ...], question: str, answer: str, summary: str = "") -> CheckResult:
    return check(answer, ledger=entries(turns), summary=summary, transcript=turns, question=question)


# A customer-service conversation of the kind the appliance serves (banks, shops), not from the data set.
SHOP = (
    Turn("s", 0, "customer", "Hi, my name is Dana Whitfield. My order number is 48213377 and it never arrived."),
    Turn("s", 1, "agent", "Sorry to hear that, Dana. I see order 48213377 paid with the card ending 4821, $1,234.50."),
    Turn("s", 2, "customer", "Can I get a refund?"),
    Turn("s", 3, "agent", "Yes. We will refund you within 5 business days."),
)


class TestRealDialogues:
    def test_real_turn_quoting_an_earlier_phone_number_passes(self):
        turns = transcript("multiwoz21:MUL0036")
        result = check_after(turns[:16], turns[16].text, turns[17].text)
        assert result.ok and result.checked == 1

    def test_real_turn_quoting_postcode_and_phone_in_another_format_passes(self):
        turns = transcript("multiwoz21:PMUL4583")  # "CB23QB" earlier, "cb23qb" now
        result = check_after(turns[:8], turns[8].text, turns[9].text)
        assert result.ok and result.checked == 2

    def test_one_altered_character_of_a_reference_is_a_contradiction(self):
        turns = transcript("multiwoz21:MUL0036")
        answer = "Your hotel reference number is W9945XIT ."
        result = check_after(turns[:18], "What was my hotel reference?", answer)
        (finding,) = result.findings
        assert (finding.entity.text, finding.status, finding.expected) == ("W9945XIT", "contradiction", "W9945XIS")


class TestFindings:
    def test_quoted_facts_in_new_formats_pass(self):
        answer = "Order 48213377 for 1234.50 USD will be refunded to the card ending in 4821 within 5 business days, Ms. Whitfield."
        result = check_after(SHOP, "When do I get my money?", answer)
        assert result.ok, result.findings
        assert result.checked == 5

    def test_one_digit_altered_order_number_is_a_contradiction_with_the_right_value(self):
        result = check_after(SHOP, "What was my order number?", "Your order number is 48213378.")
        (finding,) = result.findings
        assert finding.status == "contradiction"
        assert finding.entity.text == "48213378"
        assert finding.expected == "48213377"

    def test_invented_case_number_is_unsupported(self):
        result = check_after(SHOP, "Is there a case number?", "Yes, your case number is CX-99120.")
        (finding,) = result.findings
        assert (finding.entity.text, finding.status, finding.expected) == ("CX-99120", "unsupported", "")

    def test_changed_amount_and_deadline(self):
        result = check_after(SHOP, "How much?", "We will refund $1,234.60 within 3 business days.")
        assert [(f.entity.kind, f.status, f.expected) for f in result.findings] == [
            ("commitment", "unsupported", ""),
            ("amount", "contradiction", "$1,234.50"),
        ]

    def test_facts_in_the_question_or_summary_are_supported(self):
        result = check_after(SHOP, "Is my new address CB2 3QB?", "Yes, CB2 3QB is noted.", summary="")
        assert result.ok
        result = check_after((), "Hello", "Your booking ref is W9945XIS.", summary="Booking W9945XIS is confirmed.")
        assert result.ok

    def test_a_corrected_phone_number_must_not_be_quoted(self):
        turns = (
            Turn("s", 0, "customer", "My phone is 07700 900123."),
            Turn("s", 1, "agent", "Thanks."),
            Turn("s", 2, "customer", "Sorry, it is actually 07700 900124."),
        )
        result = check_after(turns, "What number do you have?", "We have 07700 900123 on file.")
        (finding,) = result.findings
        assert (finding.status, finding.expected) == ("contradiction", "07700 900124")

    def test_a_shorter_form_of_the_name_is_no_correction(self):
        turns = (Turn("s", 0, "customer", "My name is Dana Whitfield."), Turn("s", 1, "agent", "Thank you, Dana."))
        assert check_after(turns, "Who am I?", "You are Dana Whitfield, my name is Dana Whitfield.").findings == ()
        result = check_after(turns, "Who am I?", "Thank you, Mr. Whitfield, and thanks, Dana.")
        assert result.ok and result.checked == 2

    def test_international_and_national_forms_of_one_phone(self):
        turns = (Turn("s", 0, "agent", "Call them on 01223 842725."),)
        assert check_after(turns, "?", "That is +44 1223 842725.").ok
        assert not check_after((Turn("s", 0, "agent", "Call +45 1223 842725."),), "?", "That is +44 1223 842725.").ok

    def test_dates_match_across_formats(self):
        turns = (Turn("s", 0, "customer", "I'd like it on the 3rd of March at 4:30 in the evening."),)
        assert check_after(turns, "?", "Booked for March 3rd at 4:30 pm.").ok
        assert not check_after(turns, "?", "Booked for March 4th at 4:30 am.").ok

    def test_calling_the_customer_by_another_name_is_a_contradiction_with_their_name(self):
        result = check_after(SHOP, "Thanks", "You're welcome, Mr. Johnson.")
        assert [(f.entity.text, f.status, f.expected) for f in result.findings] == [
            ("Johnson", "contradiction", "Dana Whitfield")
        ]

    def test_an_invented_name_of_someone_else_is_unsupported(self):
        result = check_after(SHOP, "Who handles refunds?", "Mr. Johnson in billing will call you.")
        assert [(f.entity.text, f.status) for f in result.findings] == [("Johnson", "unsupported")]

    def test_answer_without_facts(self):
        assert check_after(SHOP, "Thanks", "You're welcome!") == CheckResult(checked=0)


class TestRepair:
    def test_redact_replaces_every_flagged_span(self):
        answer = "Your case number is CX-99120 and we refund $1,234.60."
        result = check_after(SHOP, "Case?", answer)
        assert redact(answer, result, "[please check with staff]") == (
            "Your case number is [please check with staff] and we refund [please check with staff]."
        )

    def test_redact_merges_a_commitment_with_its_deadline(self):
        answer = "We will call you by Friday."
        result = check_after(SHOP, "Call?", answer)
        assert redact(answer, result, "[?]") == "[?]."

    def test_strict_instruction_lists_the_current_facts_and_the_rejected_ones(self):
        result = check_after(SHOP, "Order?", "Your order number is 48213378.")
        text = strict_instruction(current_facts(entries(SHOP)), result.findings)
        assert "- order: 48213377" in text
        assert "- name: Dana Whitfield" in text
        assert "- amount: $1,234.50" in text
        assert "48213378 (the right value is 48213377)" in text

    def test_strict_instruction_without_facts(self):
        assert "No numbers" in strict_instruction([])


BANK = (
    Turn("s", 0, "agent", "Could I get your full name, please?"),
    Turn("s", 1, "customer", "Yes, Sarah Brown."),
    Turn("s", 2, "agent", "Can you tell me your account number, please?"),
    Turn("s", 3, "customer", "It's 95381901."),
    Turn("s", 4, "agent", "Could you provide your date of birth, please?"),
    Turn("s", 5, "customer", "10/31/1986"),
)


class TestNamesAndSlotValues:
    """Names and slot values given as bare answers are checked like identifiers (issue 14, item 5)."""

    @pytest.mark.parametrize(
        "answer",
        [
            "Thank you, Sarah.",
            "Thanks, Ms. Brown, your account 95381901 is verified.",
            "You gave me the name Sarah Brown and the date of birth October 31, 1986.",
        ],
    )
    def test_the_customers_own_values_pass(self, answer: str):
        assert check_after(BANK, "Is that right?", answer).ok

    @pytest.mark.parametrize(
        ("answer", "wrong", "right"),
        [
            ("Thank you, Sarah Green.", "Sarah Green", "Sarah Brown"),
            ("Your name is John Smith.", "John Smith", "Sarah Brown"),
            ("Ihr Name ist Jürgen Klein.", "Jürgen Klein", "Sarah Brown"),
            ("Your account number is 95381907.", "95381907", "95381901"),
            ("Your date of birth is 10/13/1986.", "10/13/1986", "10/31/1986"),
        ],
    )
    def test_another_value_is_a_contradiction_with_the_right_one(self, answer: str, wrong: str, right: str):
        (finding,) = check_after(BANK, "Can you read that back?", answer).findings
        assert (finding.entity.text, finding.status, finding.expected) == (wrong, "contradiction", right)

    def test_a_name_spoken_of_is_not_the_customers(self):
        turns = (*BANK, Turn("s", 6, "agent", "Your appointment with Dr. Johnson is booked."))
        assert check_after(turns, "Who will I see?", "You will see Dr. Johnson.").ok

    def test_real_quoting_turns_of_the_star_dialogues_stay_unflagged_and_altered_ones_are_flagged(self):

        from appliance.lab.bench.guards import score_checker

        with (SHARED_DATA / "dev_star_conversations.jsonl").open() as fh:
            conversations = [json.loads(line) for line in fh if line.strip()]
        turns = [tuple(Turn(c["id"], i, t["role"], t["text"]) for i, t in enumerate(c["turns"])) for c in conversations]
        score = score_checker(turns)
        assert score.real >= 30 and score.real_flagged == 0, score.false_alarms
        assert score.altered_flagged == score.altered, score.missed


class TestCheckerOnTypedFacts:
    def test_a_superseded_value_stated_as_current_is_a_contradiction(self):
        said = (
            agent("What is your account number?"),
            customer("It's 12345678."),
            agent("Thank you, one moment please."),
            customer("Sorry, I gave you the wrong one, it's 12345679."),
        )
        turns = tuple(Turn("s", i, r, t) for i, (r, t) in enumerate(said))  # type: ignore[arg-type]
        result = check(
            "Your account number is 12345678.", ledger=entries(turns), summary="", transcript=turns, question="?"
        )
        assert [(f.entity.text, f.status, f.expected) for f in result.findings] == [
            ("12345678", "contradiction", "12345679")
        ]
        right = check(
            "Your account number is 12345679.", ledger=entries(turns), summary="", transcript=turns, question="?"
        )
        assert right.ok

    def test_any_of_several_current_values_is_supported(self):
        turns = (Turn("s", 0, "customer", "I have two accounts: checking 11112222 and savings 33334444."),)
        for answer in ("Your savings account 33334444 is open.", "Your checking account 11112222 is open."):
            assert check(answer, ledger=entries(turns), summary="", transcript=turns, question="?").ok

    def test_names_are_matched_without_case(self):
        turns = (Turn("s", 0, "agent", "Can I have your name please?"), Turn("s", 1, "customer", "mei lin chen"))
        ok = check("Thank you, Mei Lin Chen.", ledger=entries(turns), summary="", transcript=turns, question="?")
        assert ok.ok
        wrong = check("Your name is mei lin wong.", ledger=entries(turns), summary="", transcript=turns, question="?")
        assert [(f.status, f.expected) for f in wrong.findings] == [("contradiction", "mei lin chen")]
