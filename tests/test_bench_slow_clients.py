"""`appliance bench slow-clients` against a real daemon (SmolLM2-135M), small and with short deadlines:
its report has the issue's figures, the slow connections are closed by the limits the daemon counts,
and the second client is answered throughout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from appliance.config import ROOT

from .support import write_config
from .test_daemon import needs_model


@pytest.mark.real_model
@pytest.mark.daemon
@needs_model
def test_a_small_attack_is_cut_off_and_reported(tmp_path: Path):
    config = write_config(
        tmp_path, "[server]\nheader_timeout_s = 2\nbody_grace_s = 1\nmax_connections_per_client = 8\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "appliance", "--config", str(config), "bench", "slow-clients", "--count", "30",
         "--interval", "0.5", "--json"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["plan"] == {
        "count": 30,
        "slow_bodies": 6,
        "never_handshaking": 0,
        "tls": False,
        "interval_s": 0.5,
        "header_timeout_s": 2.0,
        "per_client": None,
    }
    refused = report["refusals"]
    assert refused["connections_per_client"] == 22  # 30 from one address, 8 admitted
    assert refused.get("header_timeout", 0) + refused.get("body_too_slow", 0) == 8
    assert report["never_closed"] == 0 and report["closed_share"] == 1.0
    second = report["second_client"]
    assert second["asked"] >= 3 and second["answered"] == second["asked"]
    assert report["fds"]["after"] <= report["fds"]["before"] + 2  # the daemon let go of every connection
    assert set(report["met"]) == {"second_client_served", "closed_share", "no_fd_exhaustion", "rss_growth"}
