"""`appliance bench guards`: the pure scoring functions, and the command's JSON."""

from __future__ import annotations

import json
import subprocess
import sys

from appliance.config import ROOT, Settings
from appliance.facts.entities import extract
from appliance.lab.bench.guards import (
    alter,
    context_before,
    generate_report,
    load_conversations,
    position_label,
    said_keys,
    score_checker,
    score_stage,
    to_turns,
)
from appliance.stage import LATE_CUES, OPEN_CUES
from appliance.types import Turn

from .fakes import FakeResponder
from .support import SHARED_DATA, write_config

CONVERSATIONS = SHARED_DATA / "dev_conversations.jsonl"


class TestAlter:
    def test_changes_one_character_and_keeps_the_kind(self):
        text = "Your reference number is W9945XIS ."
        (ref,) = extract(text)
        changed, new = alter(text, ref, set())
        assert changed == "Your reference number is W9945XIT ." and new.kind == "reference"

    def test_skips_values_that_were_said(self):
        text = "at 18:45 ."
        (time,) = extract(text)
        changed, new = alter(text, time, {"time:18:46"})
        assert new.norm == "18:44"

    def test_a_weekday_cannot_be_altered_by_one_letter(self):
        text = "on Saturday ."
        assert alter(text, extract(text)[0], set()) is None

    def test_a_name_becomes_another_name(self):
        text = "Thank you, Mrs. Sarah Brown."
        (name,) = [e for e in extract(text) if e.kind == "name"]
        changed, new = alter(text, name, set())
        assert changed == "Thank you, Mrs. Sarah Lindqvist." and new.kind == "name" and new.text == "Sarah Lindqvist"
        changed, new = alter(text, name, {"name:sarah lindqvist"})
        assert new.text == "Sarah Okafor"


BANK = (
    Turn("b", 0, "agent", "Can you tell me your account number, please?"),
    Turn("b", 1, "customer", "95381901"),
    Turn("b", 2, "agent", "Could I get your full name, please?"),
    Turn("b", 3, "customer", "Yes, Sarah Brown."),
    Turn("b", 4, "agent", "Thank you, Mrs. Brown. I see a pending transfer on account 95381901."),
)


class TestScores:
    def test_checker_on_real_dialogues(self):
        conversations = [to_turns(c) for c in load_conversations(CONVERSATIONS, limit=10)]
        score = score_checker(conversations)
        assert score.real > 0 and score.altered > 0
        assert score.altered_flagged == score.altered
        assert score.real_flagged == 0
        assert len(score.check_ms) == score.real + score.altered

    def test_slot_answers_count_as_said_and_altered_names_and_numbers_are_flagged_by_kind(self):
        assert "name:sarah brown" in said_keys(BANK[:4]) and "id:95381901" in said_keys(BANK[:4])
        score = score_checker([BANK])
        assert score.real == 1 and score.real_flagged == 0
        assert score.altered == score.altered_flagged == 2
        assert {k: (v.quoted, v.altered_flagged) for k, v in score.by_kind.items()} == {
            "name": (1, 1),
            "account": (1, 1),
        }

    def test_context_before_an_agent_turn(self):
        turns = to_turns(load_conversations(CONVERSATIONS, limit=1)[0])
        ctx = context_before(turns, 5)
        assert ctx.question == turns[4].text and ctx.history == turns[:4]
        assert "reference:w9945xis" not in said_keys(turns[:5])

    def test_position_labels(self):
        assert [position_label(i, 20) for i in (0, 3, 4, 17, 18, 19)] == [
            "early",
            "early",
            "mid",
            "mid",
            "late",
            "late",
        ]

    def test_stage_scores_customer_turns_only(self):
        conversations = [to_turns(c) for c in load_conversations(CONVERSATIONS, limit=3)]
        score = score_stage(conversations, early_turns=3, late_cues=LATE_CUES, open_cues=OPEN_CUES)
        assert score.turns == sum(1 for turns in conversations for t in turns if t.role == "customer")
        assert 0.0 <= score.agreement <= 1.0 and sum(score.confusion.values()) == score.turns

    def test_generate_with_a_fake_responder_that_invents_a_case_number(self):
        conversations = [to_turns(c)[:4] for c in load_conversations(CONVERSATIONS, limit=1)]
        fake = FakeResponder(["Your case number is CX-99120.", "Happy to help.", "Sure.", "Fine."])
        report = generate_report(conversations, fake, Settings())
        assert report["answers"] == 2
        assert report["unsupported_before"] == 0.5  # the invented case number
        assert report["unsupported_after"] == 0.0  # the retry with the strict instruction dropped it
        assert report["regenerated"] == 1
        assert report["examples"][0]["findings"] == ["case 'CX-99120' unsupported"]
        assert "No numbers, codes, amounts, dates or names are known yet" in fake.prompts[1][-1].content

    def test_generate_counts_answers_asking_for_a_secret(self):
        conversations = [to_turns(c)[:2] for c in load_conversations(CONVERSATIONS, limit=1)]
        fake = FakeResponder(["Could you give me your PIN, please?", "What is your PIN?"])
        report = generate_report(conversations, fake, Settings())
        assert report["asking_for_a_secret"] == {"first": 1, "after_the_retry": 1}

    def test_generate_with_the_redact_policy(self):
        conversations = [to_turns(c)[:2] for c in load_conversations(CONVERSATIONS, limit=1)]
        fake = FakeResponder(["Your case number is CX-99120."])
        report = generate_report(conversations, fake, Settings.model_validate({"guard": {"policy": "redact"}}))
        assert (report["answers"], report["unsupported_before"], report["unsupported_after"]) == (1, 1.0, 0.0)
        assert report["redacted"] == 1 and len(fake.prompts) == 1


class TestCommand:
    def test_json_schema(self, tmp_path):
        cfg = write_config(tmp_path)
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "appliance",
                "--config",
                str(cfg),
                "bench",
                "guards",
                "--conversations",
                str(CONVERSATIONS),
                "--limit",
                "5",
                "--json",
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=True,
        )
        report = json.loads(done.stdout)
        assert set(report) >= {"checker", "stage", "generate"}
        assert {
            k: type(report["checker"][k]) for k in ("altered", "altered_flagged", "real", "real_flagged")
        } == dict.fromkeys(("altered", "altered_flagged", "real", "real_flagged"), int)
        assert isinstance(report["stage"]["turns"], int) and isinstance(report["stage"]["agreement"], float)
        assert report["generate"] is None
        assert set(report["checker"]["check_ms"]) == {"p50", "p95"}
        for counts in report["checker"]["by_kind"].values():
            assert set(counts) == {"quoted", "real_flagged", "altered", "altered_flagged"}
        assert sum(k["altered"] for k in report["checker"]["by_kind"].values()) == report["checker"]["altered"]
        asks = report["secret_requests"]
        assert asks["asks_caught"] == asks["asks"] and asks["mentions_untouched"] == asks["mentions"]

    def test_table(self, tmp_path):
        cfg = write_config(tmp_path)
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "appliance",
                "--config",
                str(cfg),
                "bench",
                "guards",
                "--conversations",
                str(CONVERSATIONS),
                "--limit",
                "2",
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=True,
        )
        assert "altered facts flagged" in done.stdout and "agreement with positions" in done.stdout
