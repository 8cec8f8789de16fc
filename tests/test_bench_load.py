"""`appliance bench load` against a real daemon (SmolLM2-135M): its report has the issue's shape,
and every answered turn it counts as stored was found in the database."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from appliance.config import ROOT
from appliance.lab.stats import percentile

from .test_daemon import Daemon, needs_model, start_daemon


@pytest.mark.real_model
@needs_model
class TestBenchLoad:
    def test_json_report_with_every_turn_stored(self, tmp_path: Path):
        daemon: Daemon = start_daemon(tmp_path, max_tokens=16, token="bench-token")
        (tmp_path / "client-token").write_text("bench-token\n")
        try:
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "appliance",
                    "bench",
                    "load",
                    "--url",
                    daemon.url,
                    "--clients",
                    "3",
                    "--turns",
                    "2",
                    "--token-file",
                    str(tmp_path / "client-token"),
                    "--json",
                ],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert done.returncode == 0, done.stdout + done.stderr
            report = json.loads(done.stdout)
            assert report["clients"] == 3 and report["turns"] == 6
            assert report["errors"] == 0 and report["stored_turns"] == 6
            assert set(report["latency_s"]) == {"p50", "p95"}
            assert 0 < report["latency_s"]["p50"] <= report["latency_s"]["p95"]
            assert report["throughput_turns_per_s"] > 0
            lag = report["summary_lag_turns"]  # sampled after each turn
            assert set(lag) == {"p50", "max"} and 0 <= lag["p50"] <= lag["max"]
            with daemon.client() as http:
                sessions = http.get("/v1/sessions", params={"search": "bench load client"}).json()["sessions"]
            assert sorted(s["turns"] for s in sessions) == [4, 4, 4]
        finally:
            assert daemon.stop() == 0, daemon.output()


def test_an_unreachable_daemon_exits_2():
    done = subprocess.run(
        [sys.executable, "-m", "appliance", "bench", "load", "--url", "http://127.0.0.1:9", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "cannot reach the daemon" in done.stderr


def test_latency_percentiles_are_linearly_interpolated():
    """The one percentile of every lab report (docs/evaluation.md: "Percentiles are linearly interpolated")."""
    values = [float(v) for v in range(1, 21)]
    assert percentile(values, 50) == 10.5
    assert percentile(values, 95) == pytest.approx(19.05)
    assert percentile(values, 0) == 1.0 and percentile(values, 100) == 20.0
    assert percentile([], 50) == 0.0
