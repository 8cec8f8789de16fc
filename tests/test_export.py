"""``appliance export-training``: one four-part example per agent turn, with context as of that turn."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from appliance.app import pipeline_settings
from appliance.cli import cli
from appliance.config import Settings, load_settings
from appliance.context import POLICIES
from appliance.lab.export import export, summary_as_of
from appliance.stage import STAGE_INSTRUCTIONS
from appliance.store import Store
from appliance.turn.pipeline import Pipeline
from appliance.turn.settings import PipelineSettings
from appliance.types import SummaryVersion

from .fakes import FakeResponder
from .support import TEST_MODEL, write_config
from .test_evaluate import DIALOGUE

TINY = (
    ("customer", "I need a taxi at 10:30."),
    ("agent", "Booked, contact number 07218068540."),
    ("customer", "Thanks, that's all."),
    ("agent", "Goodbye!"),
)
LONGER = DIALOGUE  # the eval tests' booking dialogue: train, reference, postcode, price


@pytest.fixture
def spec() -> PipelineSettings:
    return dataclasses.replace(
        pipeline_settings(Settings()), system_prompt="SYS", instruction="INSTR", budget_tokens=300
    )


def fill(store: Store, turns, policy: str = "rolling") -> str:  # type: ignore[no-untyped-def]
    pipeline = Pipeline(store, FakeResponder(), POLICIES, pipeline_settings(Settings()))
    session = pipeline.sessions.new_session(policy=policy)
    for role, text in turns:
        pipeline.sessions.record_turn(session.id, role, text)
    return session.id


def run(store: Store, spec: PipelineSettings, **kwargs) -> tuple[list[dict], dict]:  # type: ignore[no-untyped-def]
    out = io.StringIO()
    counts = export(store, out, spec, FakeResponder(), **kwargs)
    return [json.loads(line) for line in out.getvalue().splitlines()], counts


class TestExamples:
    def test_exact_jsonl_for_a_tiny_conversation(self, store: Store, spec: PipelineSettings):
        sid = fill(store, TINY)
        out = io.StringIO()
        export(store, out, spec, FakeResponder(), min_turns=2, keep_pii=True)
        early = STAGE_INSTRUCTIONS["early"]  # both turns are early: the stage's directive follows the question
        first_user = (
            "[CONTEXT]\n(no earlier conversation)\n\n[QUESTION]\nI need a taxi at 10:30.\n\n[INSTRUCTION]\n" + early
        )
        second_user = (
            "[CONTEXT]\nLatest turns:\nCustomer: I need a taxi at 10:30.\nAgent: Booked, contact number 07218068540.\n\n"
            "Exact facts of the latest turns:\nturn 0: time 10:30\nturn 1: phone 07218068540\n\n"
            "[QUESTION]\nThanks, that's all.\n\n[INSTRUCTION]\n" + early
        )
        expected = [
            {
                "session_id": sid,
                "turn": 1,
                "stage": "early",
                "summary_version": None,
                "prompt": first_user + "\n\n[RESPONSE]\n",
                "target": "Booked, contact number 07218068540.",
                "messages": [
                    {"role": "system", "content": "SYS\nINSTR"},
                    {"role": "user", "content": first_user},
                    {"role": "assistant", "content": "Booked, contact number 07218068540."},
                ],
            },
            {
                "session_id": sid,
                "turn": 3,
                "stage": "early",
                "summary_version": None,
                "prompt": second_user + "\n\n[RESPONSE]\n",
                "target": "Goodbye!",
                "messages": [
                    {"role": "system", "content": "SYS\nINSTR"},
                    {"role": "user", "content": second_user},
                    {"role": "assistant", "content": "Goodbye!"},
                ],
            },
        ]
        assert out.getvalue() == "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in expected)

    def test_context_is_as_of_the_turn_a_later_summary_and_later_facts_are_absent(
        self, store: Store, spec: PipelineSettings
    ):
        sid = fill(store, LONGER[:7])  # turns 0-6
        store.add_summary(SummaryVersion(sid, 0, "EARLY-REJECTED", covers_to=1, status="rejected"))
        store.add_summary(SummaryVersion(sid, 0, "SUMMARY-AFTER-TURN-6 train TR5517 booked.", covers_to=5))
        pipeline = Pipeline(store, FakeResponder(), POLICIES, pipeline_settings(Settings()))
        pipeline.sessions.record_turn(sid, *LONGER[7])
        examples, counts = run(store, spec, keep_pii=True)
        assert counts == {"sessions": 1, "skipped_sessions": 0, "examples": 4}
        by_turn = {e["turn"]: e for e in examples}
        turn3 = by_turn[3]["prompt"]
        assert by_turn[3]["summary_version"] is None and "SUMMARY-AFTER-TURN-6" not in turn3
        assert "EARLY-REJECTED" not in turn3
        assert "1YXEN4V3" not in turn3  # said in turn 3 itself: the target, not the context
        assert by_turn[3]["target"] == LONGER[3][1] and "[QUESTION]\nYes, for 5 people please." in turn3
        assert by_turn[7]["summary_version"] == 2 and "SUMMARY-AFTER-TURN-6" in by_turn[7]["prompt"]
        assert "1YXEN4V3" in by_turn[7]["prompt"]

    def test_summary_as_of_takes_the_latest_accepted_before_the_question(self):
        versions = (
            SummaryVersion("s", 1, "a", covers_to=3),
            SummaryVersion("s", 2, "b", covers_to=5, status="rejected"),
            SummaryVersion("s", 3, "c", covers_to=7),
        )
        assert summary_as_of(versions, 3) is None
        assert summary_as_of(versions, 6).version == 1  # type: ignore[union-attr]
        assert summary_as_of(versions, 8).version == 3  # type: ignore[union-attr]

    def test_conversations_outside_the_turn_limits_are_skipped(self, store: Store, spec: PipelineSettings):
        fill(store, TINY)
        fill(store, LONGER)
        examples, counts = run(store, spec, min_turns=5, max_turns=100, keep_pii=True)
        assert counts == {"sessions": 1, "skipped_sessions": 1, "examples": 4}
        assert {e["target"] for e in examples} == {t for r, t in LONGER if r == "agent"}


class TestMasking:
    """By default the examples carry no names, numbers or contacts, each replaced the same way throughout."""

    def test_identifiers_become_numbered_placeholders_consistently(self, store: Store, spec: PipelineSettings):
        fill(store, LONGER)
        examples, _ = run(store, spec)
        text = json.dumps(examples)
        for value in ("TR5517", "1YXEN4V3"):
            assert value in json.dumps([t for _, t in LONGER])  # the conversation does hold them
            assert value not in text
        booked = next(e for e in examples if "[REFERENCE_" in e["target"] and "book" in e["target"].lower())
        placeholder = booked["target"][booked["target"].index("[REFERENCE_") :].split("]")[0] + "]"
        later = [e["prompt"] for e in examples if e["turn"] > booked["turn"]]
        assert later and all(placeholder in prompt for prompt in later)  # the same value, the same placeholder

    def test_keep_pii_keeps_them(self, store: Store, spec: PipelineSettings):
        fill(store, LONGER)
        examples, _ = run(store, spec, keep_pii=True)
        assert "TR5517" in json.dumps(examples)


@pytest.mark.real_model
def test_cli_exports_the_configured_database_with_the_responders_tokenizer(tmp_path: Path):
    config = write_config(tmp_path, f'[responder]\nmodel = "{TEST_MODEL}"\nn_ctx = 2048\nmax_tokens = 32\n')
    settings = load_settings(config, env={})
    store = Store.open(settings.database)
    fill(store, LONGER)
    fill(store, TINY)
    store.close()
    out = tmp_path / "train.jsonl"
    result = CliRunner().invoke(cli, ["--config", str(config), "export-training", "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 4 and all(e["prompt"].startswith("[CONTEXT]\n") for e in lines)
    assert "4 examples from 1 conversations (1 outside 5-100 turns)" in result.output
    assert out.stat().st_mode & 0o777 == 0o600
    assert "TR5517" not in out.read_text()
