"""``appliance bench perf``: the long session, the ratios' arithmetic, and the JSON schema on a real model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from appliance.cli import cli
from appliance.config import Settings
from appliance.errors import InputError
from appliance.lab.bench.perf import (
    _window_summary,
    customer_turn_at,
    format_text,
    long_session,
    measured_turns,
    shared_prefix,
    summarize_runs,
)

from .support import SHARED_DATA, TEST_MODEL, write_config


def sessions_file(tmp_path: Path, lengths: list[int]) -> Path:
    path = tmp_path / "sessions.jsonl"
    lines = []
    for n, length in enumerate(lengths):
        turns = [{"role": "customer" if i % 2 == 0 else "agent", "text": f"s{n} t{i}"} for i in range(length)]
        lines.append(json.dumps({"id": f"s{n}", "turns": turns, "probes": []}))
    path.write_text("\n".join(lines) + "\n")
    return path


class TestSession:
    def test_the_longest_session_comes_first_and_is_chained_up_to_the_length(self, tmp_path: Path):
        path = sessions_file(tmp_path, [4, 8, 6])
        turns = long_session(path, 12)
        assert len(turns) == 12
        assert turns[0][1] == "s1 t0" and turns[8][1] == "s2 t0"

    def test_too_few_turns_is_an_input_error(self, tmp_path: Path):
        with pytest.raises(InputError, match="fewer than 100"):
            long_session(sessions_file(tmp_path, [4, 6]), 100)

    def test_dev_sessions_give_at_least_100_turns(self):
        assert len(long_session(SHARED_DATA / "dev_sessions.jsonl", 120)) == 120

    def test_measured_turn_is_an_answered_customer_turn(self):
        turns = [("customer", "a"), ("agent", "b"), ("customer", "c"), ("customer", "d"), ("agent", "e")]
        assert customer_turn_at(turns, 1) == 3
        with pytest.raises(InputError):
            customer_turn_at(turns, 4)

    def test_shared_prefix(self):
        assert shared_prefix([1, 2, 3], [1, 2, 4, 5]) == 2 and shared_prefix([], [1]) == 0


def window(turn: int, warm: float, cold: float, tokens: int, shared: int) -> dict:
    sample = {
        "turn": turn,
        "ttft_s": warm,
        "cold_ttft_s": cold,
        "prompt_tokens": tokens,
        "shared_prefix_tokens": shared,
    }
    return _window_summary([sample, {**sample, "turn": turn + 2}])


def test_ratios_come_from_the_measurements():
    def run(late: float, overhead: list[float], cold: float = 2.0) -> dict:
        return {
            "overhead": [
                {
                    "turn": 2 * i,
                    "ms": ms,
                    "recall_ms": 0.0,
                    "context_ms": ms / 2,
                    "check_ms": 0.1,
                    "store_ms": 0.2,
                    "other_ms": 0.0,
                }
                for i, ms in enumerate(overhead)
            ],
            "ttft": {"early": window(4, 0.5, 0.5, 100, 60), "late": window(60, late, cold, 300, 250)},
        }

    rolling = {**run(0.55, [1.0, 2.0, 3.0, 10.0]), "gen_tps": {"appliance": 19.0, "bare": 20.0}}
    report = summarize_runs({"rolling": rolling, "raw": run(1.5, [1.0], cold=1.6)}, Settings(), turns=8)
    assert report["ttft_ratio"] == {"rolling": 1.1, "raw": 3.0}
    assert report["ttft_cold_ratio"] == {"rolling": 4.0, "raw": 3.2}
    assert report["prefix_reuse"]["rolling"]["pays_off"] and not report["prefix_reuse"]["raw"]["pays_off"]
    assert report["gen_tps_ratio"] == 0.95
    assert report["overhead_ms"]["p50"] == 2.5 and report["turns"] == 8
    assert report["met"] == {
        "overhead_p50_ms": True,
        "gen_tps_ratio": True,
        "ttft_ratio_rolling": True,
        # not measured in these runs: a ratio of 0 is never a met target
        "ttft_spike_ratio": False,
        "ttft_floor_ratio": False,
        "interleaved_ratio": False,
    }
    assert "= 1.100  (target <= 1.2: ok)" in format_text(report)


def test_measured_windows_are_answered_customer_turns():
    turns = [
        ("customer", "a"),
        ("agent", "b"),
        ("customer", "c"),
        ("customer", "d"),
        ("agent", "e"),
        ("customer", "f"),
        ("agent", "g"),
    ]
    assert measured_turns(turns, 0, 5) == [0, 3, 5]


def test_overlapping_windows_are_an_input_error(tmp_path: Path):
    config = write_config(tmp_path, "")
    args = [
        "--config",
        str(config),
        "bench",
        "perf",
        "--sessions",
        str(SHARED_DATA / "dev_sessions.jsonl"),
        "--turns",
        "40",
        "--early",
        "2",
        "--late",
        "8",
        "--window",
        "5",
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code != 0 and "--window" in result.output


@pytest.mark.real_model
def test_json_schema_on_a_short_session_with_the_tiny_model(tmp_path: Path):
    # One thread each: a CI box (2 cores) may be busy, and llama.cpp's threads degrade badly when contended.
    config = write_config(
        tmp_path,
        f'[responder]\nmodel = "{TEST_MODEL}"\nn_ctx = 2048\nmax_tokens = 32\nn_threads = 1\n'
        f'[summarizer]\nmodel = "{TEST_MODEL}"\nn_ctx = 1024\nmax_tokens = 48\nevery_turns = 6\nn_threads = 1\n'
        "[recall]\nenabled = false\n",
    )
    args = [
        "--config",
        str(config),
        "bench",
        "perf",
        "--json",
        "--model",
        TEST_MODEL,
        "--sessions",
        str(SHARED_DATA / "dev_sessions.jsonl"),
        "--turns",
        "12",
        "--early",
        "2",
        "--late",
        "8",
        "--window",
        "1",  # one answered turn per window, and one interleaved round: the smallest run that measures each
        "--gen-tokens",
        "8",
        "--repeats",
        "1",
    ]
    result = CliRunner().invoke(cli, args)  # click 8.2+: ``stdout`` apart from the progress lines on stderr
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert set(report["overhead_ms"]) >= {"p50", "p95"}
    assert all(isinstance(v, float) for v in report["overhead_ms"].values())
    assert isinstance(report["gen_tps_ratio"], float) and report["gen_tps_ratio"] > 0
    assert set(report["ttft_ratio"]) == {"rolling", "raw"} and all(v > 0 for v in report["ttft_ratio"].values())
    assert report["turns"] == 12 and report["model"] == TEST_MODEL
    late, early = report["ttft_s"]["rolling"]["late"], report["ttft_s"]["rolling"]["early"]
    assert late["turns"] == [8] and early["turns"] == [2]
    assert late["prompt_tokens"] > early["prompt_tokens"]
    # Consecutive prompts share a prefix (at least the system message), and the cache holds it.
    assert all(0 < x["shared_prefix_tokens"] < x["prompt_tokens"] for x in late["samples"])
    assert {"cold_ttft_s", "next_turn_ttft_s", "speedup", "pays_off"} <= set(report["prefix_reuse"]["rolling"])
    # The latency a customer feels: every answered turn from --early, the floor, several customers, warm-ups.
    every = report["ttft_every"]
    assert every["turns"] == 5 and every["p95_s"] >= every["p50_s"] > 0  # turns 2, 4, 6, 8, 10
    slowest = every["slowest"]
    assert len(slowest) == 5 and slowest[0]["ttft_s"] == pytest.approx(every["max_s"], abs=1e-4)
    assert {"turn", "after_summary_update", "warmed", "recall_gate"} <= set(slowest[0])
    # The ratio comes from unrounded times; the printed p95 and p50 are rounded to 4 places.
    assert report["ttft_spike_ratio"] == pytest.approx(every["p95_s"] / every["p50_s"], rel=5e-3)
    assert [x["turn"] for x in report["ttft_floor_s"]["samples"]] == [8] and report["ttft_floor_ratio"] > 0
    mixed = report["interleaved"]
    assert (
        mixed["sessions"] == 4 and len(mixed["samples"]["round_robin"]) == len(mixed["samples"]["one_at_a_time"]) == 4
    )
    assert report["interleaved_ratio"] == pytest.approx(
        mixed["round_robin_median_s"] / mixed["one_at_a_time_median_s"], rel=5e-3
    )
    assert report["prewarm"]["turns"] == 5 and report["prewarm"]["runs"] > 0
    assert set(report["met"]) >= {"ttft_spike_ratio", "ttft_floor_ratio", "interleaved_ratio"}
