"""``appliance bench context``: replay, probes, and the summarizer only where a policy reads the summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from appliance.cli import cli
from appliance.config import SummarizerSettings
from appliance.context import PromptSpec, RawPolicy, RollingPolicy
from appliance.context.base import assemble, render_turn
from appliance.errors import InputError
from appliance.facts.entities import extract
from appliance.facts.ledger import entries
from appliance.lab.bench.context import replay
from appliance.lab.dialogues import BenchSession, Probe, load_sessions
from appliance.turn.worker import SummaryWorker
from appliance.types import Manifest, Prompt, Snapshot

from .fakes import FakeResponder
from .support import MODELS_DIR, SHARED_DATA, write_config
from .test_summarizer import FakeSummarizer

SUMMARY = "Identifiers, dates, amounts: reference 1YXEN4V3."


class DigestPolicy:
    """A policy that reads the summary: the summary plus the last two turns."""

    name = "digest"
    uses_summary = True

    def build(self, snap: Snapshot, question: str, spec: PromptSpec, counter) -> Prompt:  # type: ignore[no-untyped-def]
        summary = snap.summary.text if snap.summary else ""
        context = "\n".join([summary, *(render_turn(t) for t in snap.turns[-2:])])
        messages = assemble(spec, context, question)
        manifest = Manifest(policy=self.name, budget=spec.budget, total_tokens=counter.count(messages), parts=())
        return Prompt(messages, manifest)


def session() -> BenchSession:
    filler = [("customer", "What about the weather tomorrow then?"), ("agent", "It should be sunny and warm all day.")]
    booked = [("customer", "Book me a train to Ely please."), ("agent", "Done, your reference is 1YXEN4V3.")]
    turns = booked + filler * 5
    probe = Probe(after_turn=len(turns), question="What was my reference?", expected=("1yxen 4v3",))
    return BenchSession(id="s1", turns=tuple(turns), probes=(probe,))


def test_replay_keeps_facts_through_the_summary_and_runs_the_summarizer_only_for_policies_that_read_it():
    counter = FakeResponder()
    spec = PromptSpec(system="Be brief.", instruction="Answer.", budget=60)
    models: list[FakeSummarizer] = []

    def make_worker(store):  # type: ignore[no-untyped-def]
        models.append(FakeSummarizer(default=SUMMARY))
        return SummaryWorker(store, models[-1], SummarizerSettings(every_turns=2, languages=("en",)), extract)

    report = replay(
        [session(), session()], {"raw": RawPolicy(), "digest": DigestPolicy()}, spec, counter, make_worker=make_worker
    )["policies"]
    assert report["digest"]["probes"] == report["raw"]["probes"] == 2
    assert report["digest"]["probe_facts_in_context"] == 1.0  # compared without case, spaces and commas
    assert report["raw"]["probe_facts_in_context"] == 0.0  # the reference was dropped to fit 60 tokens
    assert report["raw"]["context_tokens"]["max"] <= 60
    assert report["raw"]["summarizer"] == {"runs": 0, "failures": 0, "median_s": 0.0}
    assert report["digest"]["summarizer"]["runs"] == 12 and report["digest"]["summarizer"]["failures"] == 0


def bank_session() -> BenchSession:
    """A STAR-like bank dialogue: bare answers to the agent's requests, then other business."""
    turns = [
        ("customer", "Someone took money from my account."),
        ("agent", "Can you tell me your account number, please?"),
        ("customer", "95381901"),
        ("agent", "Could I get your full name, please?"),
        ("customer", "Katarina Miller"),
        ("agent", "Thank you. I have reported it."),
        *[("customer", "What about the weather tomorrow then?"), ("agent", "It should be sunny and warm all day.")] * 8,
    ]
    probes = (
        Probe(len(turns), "Can you read back the account number I gave you?", ("95381901",), "account", 2),
        Probe(len(turns), "What name did I give you at the start?", ("Katarina Miller",), "name", 4),
    )
    return BenchSession(id="bank", turns=tuple(turns), probes=probes)


def test_by_kind_ledger_has_misses_and_the_read_back_part():
    spec = PromptSpec(system="Be brief.", instruction="Answer.", budget=90)
    report = replay(
        [bank_session()],
        {"raw": RawPolicy(), "rolling": RollingPolicy()},
        spec,
        FakeResponder(),
        ledger_of=entries,
        misses=True,
    )
    raw, rolling = report["policies"]["raw"], report["policies"]["rolling"]
    # The ledger holds both values (the bare replies, read with the agent's request before them)...
    assert raw["ledger_has"] == rolling["ledger_has"] == 1.0
    # ...raw lost them to the budget; rolling carries them, and puts them before the question.
    assert raw["by_kind"] == {"account": {"probes": 1, "kept": 0.0}, "name": {"probes": 1, "kept": 0.0}}
    assert rolling["by_kind"] == {"account": {"probes": 1, "kept": 1.0}, "name": {"probes": 1, "kept": 1.0}}
    [account, name] = report["misses"]
    assert account["missed_by"] == "raw" and account["kind"] == "account" and account["expected"] == ["95381901"]
    assert account["said_in_turn"] == 2 and account["said"] == "customer: 95381901"
    assert account["asks_for"] == ["account"] and account["ledger_of_kind"][0].startswith("account 95381901 (turn 2")
    assert name["ledger_turn"] == ["name Katarina Miller"]


def test_a_probe_the_ledger_lacks_is_listed_as_missed_by_the_ledger():
    session = BenchSession(
        "x",
        (("customer", "hello"), ("agent", "Hi, how can I help?")),
        (Probe(2, "What was my account number?", ("11112222",), "account", 0),),
    )
    report = replay([session], {"raw": RawPolicy()}, PromptSpec("s", "i", 500), FakeResponder(), misses=True)
    assert report["policies"]["raw"]["ledger_has"] == 0.0
    assert [m["missed_by"] for m in report["misses"]] == ["ledger", "raw"]
    assert report["misses"][0]["ledger_of_kind"] == []


def test_no_summarizer_is_made_when_no_policy_reads_the_summary():
    made = []
    replay(
        [session()],
        {"raw": RawPolicy()},
        PromptSpec("s", "i", 500),
        FakeResponder(),
        make_worker=lambda store: made.append(store),
    )  # type: ignore[func-returns-value]
    assert made == []


def test_a_malformed_sessions_file_names_the_line(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"id": "a", "turns": []}\n{"turns": [{"role": "customer"}]}\n')
    with pytest.raises(InputError, match=r"s\.jsonl:2: not a session line"):
        load_sessions(path)


def test_unknown_policy_exits_2(tmp_path: Path):
    result = CliRunner().invoke(
        cli,
        [
            "--config",
            str(write_config(tmp_path)),
            "bench",
            "context",
            "--sessions",
            str(SHARED_DATA / "dev_sessions.jsonl"),
            "--policy",
            "nope",
        ],
    )
    assert result.exit_code == 2 and "unknown policy 'nope'" in result.output


@pytest.mark.real_model
def test_cli_json_schema(tmp_path: Path):
    if not (MODELS_DIR / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf").is_file():
        pytest.skip("responder model not fetched: appliance models fetch")
    result = CliRunner().invoke(
        cli,
        [
            "--config",
            str(write_config(tmp_path)),
            "bench",
            "context",
            "--sessions",
            str(SHARED_DATA / "dev_sessions.jsonl"),
            "--json",
            "--limit",
            "1",
            "--policy",
            "raw",
            "--budget",
            "512",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    (name,) = report["policies"]
    raw = report["policies"][name]
    assert name == "raw" and raw["probes"] == 2 and 0.0 <= raw["probe_facts_in_context"] <= 1.0
    assert set(raw) == {
        "probes",
        "probe_facts_in_context",
        "by_kind",
        "ledger_has",
        "context_tokens",
        "build_ms",
        "summarizer",
    }
    assert sum(k["probes"] for k in raw["by_kind"].values()) == 2 and 0.0 <= raw["ledger_has"] <= 1.0
    assert isinstance(raw["context_tokens"]["median"], int) and 0 < raw["context_tokens"]["max"] <= 512
    assert isinstance(raw["build_ms"]["p50"], float) and raw["build_ms"]["p95"] >= raw["build_ms"]["p50"]
    assert raw["summarizer"] == {"runs": 0, "failures": 0, "median_s": 0.0}
