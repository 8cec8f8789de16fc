"""``appliance bench facts``: the ledger alone on the written table and the dev probes."""

from __future__ import annotations

import json
from pathlib import Path

from .support import SHARED_DATA


class TestBench:
    def test_bench_facts_meets_the_targets_in_seconds(self):
        from appliance.lab.bench.facts import run_bench

        report = run_bench(SHARED_DATA)
        table = report["table"]
        assert table["turns"] >= 150 and table["hit_rate"] >= 0.98 and table["false_rate"] <= 0.01, table["misses"]
        assert {"en", "de", "fr", "es", "nl"} <= set(table["by_language"])
        for name, probes in report["probes"].items():
            assert probes["hit_rate"] >= 0.98, name
        json.dumps(report)  # --json prints it as it is


class TestBenchCountsPlainNumbersApart:
    def test_an_unlisted_plain_number_is_no_false_fact(self, tmp_path: Path):
        from appliance.lab.bench.facts import load_table, score_table

        rows = [
            {
                "id": "a",
                "lang": "en",
                "row": "negative",
                "facts": [],
                "turns": [{"role": "customer", "text": "meter reading is 48213"}],
            },
            {
                "id": "b",
                "lang": "en",
                "row": "negative",
                "facts": [],
                "turns": [{"role": "customer", "text": "call me on 07700 900123"}],
            },
        ]
        table = tmp_path / "t.jsonl"
        table.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
        score = score_table(load_table(table))
        assert score.plain_numbers == ["a: number '48213'"]
        assert score.false_facts == ["b: phone '07700 900123'"]
