"""``appliance eval``: replay, probe scoring, metrics, judge parsing, the resumable cache, the report."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

from appliance.cli import cli
from appliance.config import Settings, load_settings
from appliance.lab.dialogues import BenchSession, Probe, equated, kept, load_dialogues
from appliance.lab.eval import EvalOptions, evaluate
from appliance.lab.eval.judge import judge_metrics, parse_choice, parse_scores
from appliance.lab.eval.metrics import build_report
from appliance.lab.eval.replay import model_rig, position_stage, sample_turns
from appliance.lab.stats import percentile

from .fakes import FakeResponder
from .support import SHARED_DATA, TEST_MODEL, write_config
from .test_summarizer import FakeSummarizer

DIALOGUE = (
    ("customer", "I need a train to Broxbourne on Monday."),
    ("agent", "TR5517 arrives at 09:01. Shall I book it?"),
    ("customer", "Yes, for 5 people please."),
    ("agent", "Booked. Your reference number is 1YXEN4V3."),
    ("customer", "I also need a park in the centre."),
    ("agent", "Cambridge University Botanic Gardens, postcode cb21jf."),
    ("customer", "Great, what is the entrance fee?"),
    ("agent", "It is 4 pounds."),
)
PROBE = Probe(after_turn=8, question="What was my reference number again?", expected=("1YXEN4V3",), kind="reference")
STAGE_KEYS = {
    "probes",
    "probe_facts_in_context",
    "probe_answers_correct",
    "probe_answers_correct_unguarded",
    "probe_answers_exact",
    "probe_answers_exact_unguarded",
    "answers",
    "errors",
    "context_tokens",
    "ttft_s",
    "turn_s",
    "guard",
}
POLICY_KEYS = STAGE_KEYS | {"by_stage", "by_kind", "summarizer", "dialogues"}
PROBE_KEYS = {
    "probes",
    "probe_facts_in_context",
    "probe_answers_correct",
    "probe_answers_correct_unguarded",
    "probe_answers_exact",
    "probe_answers_exact_unguarded",
}


def write_dialogues(tmp_path: Path, n: int = 2) -> tuple[Path, Path]:
    conv, probes = tmp_path / "conv.jsonl", tmp_path / "probes.jsonl"
    conv.write_text(
        "".join(
            json.dumps({"id": f"d{i}", "turns": [{"role": r, "text": t} for r, t in DIALOGUE]}) + "\n" for i in range(n)
        )
    )
    probes.write_text("".join(json.dumps({"conversation_id": f"d{i}", **PROBE.__dict__}) + "\n" for i in range(n)))
    return conv, probes


def is_png(path: Path) -> bool:
    """PNG signature, then an IHDR chunk with a non-zero size."""
    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return False
    width, height = struct.unpack(">II", data[16:24])
    return width > 0 and height > 0 and data.rstrip(b"\x00").endswith(b"IEND\xaeB`\x82")


def check_schema(report: dict, policies: list[str]) -> None:
    assert list(report["policies"]) == policies
    for m in report["policies"].values():
        assert POLICY_KEYS <= set(m)
        assert isinstance(m["probes"], int)
        for key in PROBE_KEYS - {"probes"}:
            assert m[key] is None if m["probes"] == 0 else 0.0 <= m[key] <= 1.0
        assert sum(k["probes"] for k in m["by_kind"].values()) == m["probes"]
        for k in m["by_kind"].values():
            assert set(k) == PROBE_KEYS and k["probes"] > 0
        assert {"median", "p95", "max", "ratio_to_raw"} <= set(m["context_tokens"])
        assert {"p50", "p95"} <= set(m["ttft_s"]) and {"p50", "p95"} <= set(m["turn_s"])
        assert set(m["by_stage"]) == {"early", "mid", "late"}
        for s in m["by_stage"].values():
            assert STAGE_KEYS <= set(s)
        assert {"runs", "failures", "fallbacks", "time_s"} <= set(m["summarizer"])


class TestPureParts:
    def test_percentile_interpolates_and_is_zero_for_nothing(self):
        assert percentile([], 50) == 0.0
        assert percentile([1, 2, 3, 4], 50) == 2.5
        assert percentile([5], 95) == 5
        assert percentile([1, 2, 3, 4, 5], 100) == 5

    def test_position_stage_is_seed_002s_split(self):
        assert [position_stage(i, 10) for i in (0, 2, 3, 9, 10)] == ["early", "early", "mid", "mid", "late"]

    def test_sampled_turns_are_customer_turns_with_a_reply_and_fixed_by_the_seed(self):
        d = BenchSession("x", DIALOGUE, ())
        first = sample_turns(d, 2, seed=3)
        assert first == sample_turns(d, 2, seed=3) and len(first) == 2
        assert all(DIALOGUE[i][0] == "customer" and DIALOGUE[i + 1][0] == "agent" for i in first)
        assert len(sample_turns(d, 99, seed=3)) == 4

    def test_probes_file_attaches_to_conversations_and_limit_applies(self, tmp_path: Path):
        conv, probes = write_dialogues(tmp_path, 3)
        dialogues = load_dialogues(conv, probes=probes, limit=2)
        assert [d.id for d in dialogues] == ["d0", "d1"] and dialogues[0].probes == (PROBE,)

    def test_report_ratio_to_raw_and_stage_split(self):
        point = {
            "kind": "probe",
            "turn": 8,
            "stage": "late",
            "in_context": True,
            "correct": False,
            "correct_unguarded": False,
            "correct_exact": False,
            "correct_exact_unguarded": False,
            "probe_kind": "reference",
            "context_tokens": 100,
            "ttft_s": 0.1,
            "turn_s": 0.2,
            "flagged": True,
            "guard_action": "flag",
            "fallback": False,
        }
        units = [
            # raw's answer was right only after the guard's retry
            {
                "policy": "raw",
                "points": [{**point, "correct": True, "correct_exact": True}],
                "summarizer": {"runs": 0, "accepted": 0, "failures": 0, "durations_s": []},
            },
            {
                "policy": "rolling",
                "points": [
                    {**point, "context_tokens": 50, "correct": True, "correct_unguarded": True, "fallback": True}
                ],
                "summarizer": {"runs": 2, "accepted": 1, "failures": 1, "durations_s": [1.0, 3.0]},
            },
        ]
        report = build_report(units, ["rolling", "raw"], {})
        check_schema(report, ["rolling", "raw"])
        rolling = report["policies"]["rolling"]
        assert rolling["context_tokens"]["ratio_to_raw"] == 0.5
        raw = report["policies"]["raw"]
        assert rolling["probe_answers_correct"] == 1.0 and raw["probe_answers_correct"] == 1.0
        assert rolling["probe_answers_correct_unguarded"] == 1.0 and raw["probe_answers_correct_unguarded"] == 0.0
        assert rolling["by_stage"]["late"]["probes"] == 1 and rolling["by_stage"]["early"]["probes"] == 0
        assert rolling["by_stage"]["early"]["probe_answers_correct"] is None  # no probes: no score, not 0 %
        assert rolling["summarizer"] == {
            "runs": 2,
            "accepted": 1,
            "failures": 1,
            "fallbacks": 1,
            "time_s": 4.0,
            "median_s": 2.0,
        }
        assert rolling["guard"]["flagged"] == 1 and rolling["guard"]["actions"] == {"flag": 1}
        assert raw["probe_answers_exact"] == 1.0 and raw["probe_answers_exact_unguarded"] == 0.0
        assert set(rolling["by_kind"]) == {"reference"} and rolling["by_kind"]["reference"]["probes"] == 1

    def test_probes_by_kind_and_the_exact_score_beside_the_equated_one(self):
        base = {"kind": "probe", "stage": "mid", "in_context": True, "correct_exact_unguarded": False}
        points = [
            # right only as the normaliser equates values: "October 8, 1980" for "10/08/1980"
            {**base, "probe_kind": "birthdate", "correct": True, "correct_unguarded": True, "correct_exact": False},
            {**base, "probe_kind": "birthdate", "correct": False, "correct_unguarded": False, "correct_exact": False},
            {**base, "probe_kind": "name", "correct": True, "correct_unguarded": False, "correct_exact": True},
        ]
        points = [
            {**p, "context_tokens": 10, "ttft_s": 0.1, "turn_s": 0.2, "flagged": False, "fallback": False}
            for p in points
        ]
        unit = {
            "policy": "rolling",
            "points": points,
            "summarizer": {"runs": 0, "accepted": 0, "failures": 0, "durations_s": []},
        }
        m = build_report([unit], ["rolling"], {})["policies"]["rolling"]
        assert (m["probe_answers_correct"], m["probe_answers_exact"]) == (round(2 / 3, 4), round(1 / 3, 4))
        assert m["by_kind"]["birthdate"] == {
            "probes": 2,
            "probe_facts_in_context": 1.0,
            "probe_answers_correct": 0.5,
            "probe_answers_correct_unguarded": 0.5,
            "probe_answers_exact": 0.0,
            "probe_answers_exact_unguarded": 0.0,
        }
        assert m["by_kind"]["name"]["probe_answers_correct_unguarded"] == 0.0

    @pytest.mark.parametrize(
        ("expected", "answer", "exact", "right"),
        [
            ("10/08/1980", "You were born on October 8, 1980.", False, True),
            ("10/08/1980", "You were born on October 8, 1981.", False, False),
            ("300 dollars", "It was $300.", False, True),
            ("01223842725", "Call 01223 842725.", True, True),
            ("Tyler Jones", "You are tyler jones.", True, True),
            ("95381901", "Your account is 95381902.", False, False),
        ],
    )
    def test_an_answer_is_right_in_any_form_the_normaliser_equates(self, expected, answer, exact, right):
        assert kept([expected], answer) is exact and equated([expected], answer) is right


def scores(*values: int) -> dict[str, int]:
    return dict(zip(("human_likeness", "continuity", "tone_clarity", "task_appropriateness"), values))


class TestJudgeParsing:
    def test_plain_json(self):
        text = '{"human_likeness": 4, "continuity": 3, "tone_clarity": 5, "task_appropriateness": 2}'
        assert parse_scores(text) == scores(4, 3, 5, 2)

    def test_json_in_prose_and_fences_with_other_spellings(self):
        text = (
            'Sure!\n```json\n{"Human-likeness": "4", "Continuity": 3.0, "Tone/Clarity": 5, '
            '"task appropriateness": 1}\n```'
        )
        assert parse_scores(text) == scores(4, 3, 5, 1)

    def test_pairs_without_json(self):
        text = "Human likeness: 2\nContinuity = 4\nTone and clarity: 3\nTask appropriateness: 5"
        assert parse_scores(text) == scores(2, 4, 3, 5)

    def test_missing_or_out_of_range_is_none(self):
        assert parse_scores('{"human_likeness": 4, "continuity": 3}') is None
        assert parse_scores(json.dumps(scores(9, 3, 5, 2))) is None
        assert parse_scores("I cannot rate this.") is None

    def test_pairwise_choice(self):
        assert parse_choice('{"better": "A"}') == "A"
        assert parse_choice("The better one: {'better': 'b'} because...") == "B"
        assert parse_choice("tie") == "tie"
        assert parse_choice("Both are fine.") is None

    def test_judge_means_ignore_unparsed_verdicts(self):
        v = {"human_likeness": 4, "continuity": 2, "tone_clarity": 4, "task_appropriateness": 2}
        m = judge_metrics([("mid", v), ("mid", None)])
        assert m["answers"] == 1 and m["unparsed"] == 1 and m["overall"] == 3.0
        assert m["by_stage"]["mid"]["continuity"] == 2


class ReferenceResponder(FakeResponder):
    """Answers with the reference number (so probes score), and can be told to fail after N answers."""

    def __init__(self, fail_after: int | None = None) -> None:
        super().__init__(default="Your reference number is 1YXEN 4V3.")
        self.fail_after = fail_after

    def generate(self, messages, sampling, **kwargs):  # type: ignore[no-untyped-def]
        if self.fail_after is not None and len(self.prompts) >= self.fail_after:
            raise KeyboardInterrupt  # an interrupted run
        return super().generate(messages, sampling, **kwargs)


@pytest.fixture
def flag_settings(tmp_path: Path) -> Settings:
    """The guard only flags, so each answer is exactly one generation (the counts below rely on it)."""
    # The summarizer after every exchange beyond the last one, so these short dialogues get summaries.
    config = '[guard]\npolicy = "flag"\n[summarizer]\nevery_turns = 2\n[context]\nrecent_pairs = 1\n'
    return load_settings(write_config(tmp_path, config), env={})


class TestReplayAndCache:
    def options(self, tmp_path: Path, conv: Path, probes: Path) -> EvalOptions:
        return EvalOptions(
            policies=("rolling", "raw"),
            out=tmp_path / "out",
            conversations=conv,
            probes=probes,
            samples=1,
            progress=False,
        )

    def test_probe_is_scored_on_the_sent_context_and_the_answer_and_nothing_is_stored(
        self, tmp_path: Path, flag_settings: Settings
    ):
        settings = flag_settings
        conv, probes = write_dialogues(tmp_path, 1)
        model = ReferenceResponder()
        report = evaluate(self.options(tmp_path, conv, probes), model_rig(settings, model, FakeSummarizer()), run={})
        check_schema(report, ["rolling", "raw"])
        for m in report["policies"].values():
            assert m["probes"] == 1 and m["probe_facts_in_context"] == 1.0 and m["probe_answers_correct"] == 1.0
            assert m["answers"] == 2  # the probe and one sampled turn
        assert report["policies"]["rolling"]["summarizer"]["runs"] >= 1  # the worker ran as in production
        assert report["policies"]["raw"]["summarizer"]["runs"] == 0
        unit = json.loads(next((tmp_path / "out" / "cache" / "rolling").glob("*.json")).read_text())
        sample = next(p for p in unit["points"] if p["kind"] == "sample")
        assert sample["reference"] == DIALOGUE[sample["turn"] + 1][1]
        # The probe's question was asked last: the prompt carries all 8 real turns, not an earlier answer.
        assert "1YXEN4V3" in model.prompts[-1][-1].content and DIALOGUE[-1][1] in model.prompts[-1][-1].content

    def test_an_interrupted_run_resumes_from_the_cache(self, tmp_path: Path, flag_settings: Settings):
        settings = flag_settings
        conv, probes = write_dialogues(tmp_path, 2)
        options = self.options(tmp_path, conv, probes)
        with pytest.raises(KeyboardInterrupt):
            evaluate(options, model_rig(settings, ReferenceResponder(fail_after=5), None), run={})
        cached = sorted(p.name for p in (tmp_path / "out" / "cache").rglob("*.json"))
        assert len(cached) == 2  # d0 under both policies; d1 was interrupted
        second = ReferenceResponder()
        report = evaluate(options, model_rig(settings, second, None), run={})
        assert len(second.prompts) == 4  # only d1 (2 answers x 2 policies) was replayed
        assert report["policies"]["raw"]["probes"] == 2
        third = ReferenceResponder(fail_after=0)
        assert evaluate(options, model_rig(settings, third, None), run={}) == report  # all from the cache

    def test_a_changed_setting_invalidates_the_cache(self, tmp_path: Path, flag_settings: Settings):
        settings = flag_settings
        conv, probes = write_dialogues(tmp_path, 1)
        options = self.options(tmp_path, conv, probes)
        evaluate(options, model_rig(settings, ReferenceResponder(), None), run={"budget_tokens": 1})
        again = ReferenceResponder()
        evaluate(options, model_rig(settings, again, None), run={"budget_tokens": 2})
        assert len(again.prompts) == 4


@pytest.mark.real_model
def test_small_eval_with_the_tiny_model_writes_report_and_plots(tmp_path: Path):
    """CI's eval: two dev dialogues with probes, two policies, SmolLM2-135M answering and summarizing."""
    probes_by_id: dict[str, list[str]] = {}
    for line in (SHARED_DATA / "dev_probes.jsonl").read_text().splitlines():
        probes_by_id.setdefault(json.loads(line)["conversation_id"], []).append(line)
    lines = (SHARED_DATA / "dev_conversations.jsonl").read_text().splitlines()
    with_probes = [ln for ln in lines if json.loads(ln)["id"] in probes_by_id]
    chosen = sorted(with_probes, key=lambda ln: len(json.loads(ln)["turns"]))[:2]
    conv, probes = tmp_path / "conv.jsonl", tmp_path / "probes.jsonl"
    conv.write_text("\n".join(chosen) + "\n")
    probes.write_text("\n".join(p for ln in chosen for p in probes_by_id[json.loads(ln)["id"]]) + "\n")
    # Answers of 8 tokens: every answer, probe and plot is there; longer ones only take longer to decode.
    config = write_config(
        tmp_path,
        f'[responder]\nmodel = "{TEST_MODEL}"\nn_ctx = 2048\nmax_tokens = 8\nn_threads = 1\n'
        f'[summarizer]\nmodel = "{TEST_MODEL}"\nn_ctx = 1024\nmax_tokens = 48\nevery_turns = 8\nn_threads = 1\n'
        '[context]\nbudget_tokens = 512\n[guard]\npolicy = "flag"\n[recall]\nenabled = false\n',
    )
    out = tmp_path / "out"
    args = [
        "--config",
        str(config),
        "eval",
        "--conversations",
        str(conv),
        "--probes",
        str(probes),
        "--policy",
        "rolling",
        "--policy",
        "raw",
        "--out",
        str(out),
        "--samples",
        "1",
        "--no-progress",
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    check_schema(report, ["rolling", "raw"])
    assert all(m["probes"] >= 2 for m in report["policies"].values())
    assert report["policies"]["raw"]["context_tokens"]["ratio_to_raw"] == 1.0
    assert report["run"]["responder"] == TEST_MODEL and report["run"]["seed"] == 0
    for name in ("context_tokens.png", "probe_accuracy.png", "latency.png"):
        assert is_png(out / name), name
    md = (out / "report.md").read_text()
    assert "| rolling |" in md and "## By stage" in md


class FakeJudge(FakeResponder):
    """Scores every answer 4, 3, 5, 4 and always prefers the reply shown first."""

    name = "fake-judge"

    def generate(self, messages, sampling, **kwargs):  # type: ignore[no-untyped-def]
        pairwise = "Reply A:" in messages[-1].content
        self.replies = [
            '{"better": "A"}'
            if pairwise
            else 'Scores: {"human_likeness": 4, "continuity": 3, "tone_clarity": 5, "task_appropriateness": 4}'
        ]
        return super().generate(messages, sampling, **kwargs)


def test_judge_scores_samples_and_compares_policies_once_each(tmp_path: Path, flag_settings: Settings):
    conv, probes = write_dialogues(tmp_path, 1)
    options = EvalOptions(
        policies=("rolling", "raw"), out=tmp_path / "out", conversations=conv, probes=probes, samples=2, progress=False
    )
    judge = FakeJudge()
    report = evaluate(options, model_rig(flag_settings, ReferenceResponder(), None), run={}, judge_model=judge)
    for m in report["policies"].values():
        assert m["judge"]["answers"] == 2 and m["judge"]["overall"] == 4.0 and m["judge"]["continuity"] == 3.0
    pair = report["pairwise"]["rolling vs raw"]
    assert pair["comparisons"] == 2 and pair["a_wins"] + pair["b_wins"] == 2 and pair["unparsed"] == 0
    # The fake responder answers both policies alike, so a score prompt repeats and is asked once: 2 + 2.
    assert len(judge.prompts) == 4
    again = FakeJudge()
    evaluate(options, model_rig(flag_settings, ReferenceResponder(fail_after=0), None), run={}, judge_model=again)
    assert again.prompts == []  # verdicts come from OUT/judge.json
    assert "## Pairwise" in (tmp_path / "out" / "report.md").read_text()


def test_a_question_the_pipeline_refuses_is_a_missed_probe_not_a_crash(tmp_path: Path):
    config = write_config(tmp_path, '[guard]\npolicy = "flag"\n[context]\nbudget_tokens = 64\n')
    settings = load_settings(config, env={})
    conv, probes = write_dialogues(tmp_path, 1)
    long_probe = Probe(after_turn=8, question="word " * 200, expected=("1YXEN4V3",))
    probes.write_text(json.dumps({"conversation_id": "d0", **long_probe.__dict__}) + "\n")
    options = EvalOptions(
        policies=("raw",), out=tmp_path / "out", conversations=conv, probes=probes, samples=0, progress=False
    )
    m = evaluate(options, model_rig(settings, ReferenceResponder(), None), run={})["policies"]["raw"]
    assert m["probes"] == 1 and m["errors"] == 1 and m["probe_answers_correct"] == 0.0 and m["answers"] == 0
