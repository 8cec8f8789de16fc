"""`appliance bench lookup`: the cases of each kind, and one answer of each on the tiny model, both ways."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from appliance.lab.bench.lookup import KINDS, branch_cases, knowledge_cases, readback_cases, sections

from .support import ROOT, SHARED_DATA, write_config


def test_a_documents_sections_are_its_headings_with_a_body():
    text = "# Fees\n\nIntro.\n\n## Accounts\n\n### What does it cost?\n\nNothing.\n\n### And paper?\n\n£3.\n"
    assert sections(text) == [("What does it cost?", "Nothing."), ("And paper?", "£3.")]


def test_each_kind_places_what_its_answer_repeats():
    grounded = next(branch_cases(ROOT / "examples" / "branch")).messages[-1].content
    assert grounded.startswith("[CONTEXT]\nPassage (") and "[QUESTION]" in grounded
    assert "Passage (" in next(knowledge_cases(SHARED_DATA / "knowledge_dev")).messages[-1].content
    assert "Facts asked for (from turn" in next(readback_cases(SHARED_DATA / "dev_sessions.jsonl")).messages[-1].content


@pytest.mark.real_model
def test_the_command_answers_each_kind_both_ways_on_the_tiny_model(tmp_path):
    config = write_config(tmp_path, '[responder]\nmodel = "smollm2-135m-instruct"\nn_ctx = 2048\n')
    done = subprocess.run(
        [sys.executable, "-m", "appliance", "--config", str(config), "bench", "lookup", "--limit", "1"]
        + ["--max-tokens", "6", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    for kind in KINDS:
        assert report[kind]["answers"] == 1 and report[kind]["tokens"]["off"] > 0, kind
        assert 0 <= report[kind]["identical"] <= 1
    assert report["grounded"]["drafted"] > 0
