"""Recall: the pinned embedding model loaded offline, BLOBs, the cue gate, and the choice of turns
on real dev sessions with the real all-MiniLM-L6-v2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from appliance.config import ROOT, RecallSettings
from appliance.context.recall import (
    DEFAULT_CUES,
    DIMENSIONS,
    MODEL_SHA256,
    CueGate,
    Recall,
    choose,
    from_blob,
    packaged_model_dir,
    stack,
    to_blob,
    verify_model,
)
from appliance.errors import ModelFileError
from appliance.types import Turn

from .support import NO_NETWORK, SHARED_DATA


def turns_of(texts: list[str]) -> list[Turn]:
    return [Turn("s", i, "customer" if i % 2 == 0 else "agent", t) for i, t in enumerate(texts)]


class TestModelFile:
    def test_the_packaged_weights_match_the_pin(self):
        assert verify_model(packaged_model_dir()) == packaged_model_dir()

    def test_changed_weights_are_refused(self, tmp_path: Path):
        (tmp_path / "model.safetensors").write_bytes(b"not the model")
        with pytest.raises(ModelFileError, match=MODEL_SHA256):
            verify_model(tmp_path)
        with pytest.raises(ModelFileError, match=MODEL_SHA256):
            Recall(tmp_path)

    def test_missing_weights_are_refused(self, tmp_path: Path):
        with pytest.raises(ModelFileError, match="missing"):
            verify_model(tmp_path)


class TestBlobs:
    def test_round_trip_as_float32(self):
        v = np.linspace(-1, 1, DIMENSIONS).astype(np.float64)
        blob = to_blob(v)
        assert len(blob) == DIMENSIONS * 4
        back = from_blob(blob)
        assert back.dtype == np.float32 and np.allclose(back, v, atol=1e-7)
        assert stack([blob, blob]).shape == (2, DIMENSIONS)
        assert stack([]).shape == (0, DIMENSIONS)


class TestChoose:
    def test_best_first_within_k_and_min_score(self):
        cands = turns_of(["a", "b", "c", "d"])
        vectors = np.array([[1, 0], [0.6, 0.8], [0.8, 0.6], [0, 1]], dtype=np.float32)
        query = np.array([1, 0], dtype=np.float32)
        assert choose(query, cands, vectors, 2, 0.0) == (0, 2)
        assert choose(query, cands, vectors, 4, 0.5) == (0, 2, 1)
        assert choose(query, cands, vectors, 0, 0.0) == ()
        assert choose(query, [], np.zeros((0, 2)), 3, 0.0) == ()

    def test_ties_go_to_the_older_turn(self):
        cands = turns_of(["x", "y"])
        vectors = np.array([[1, 0], [1, 0]], dtype=np.float32)
        assert choose(np.array([1, 0]), cands[::-1], vectors, 1, 0.0) == (0,)


class TestGate:
    gate = CueGate()

    @pytest.mark.parametrize("text", [
        "Sorry, could you tell me the reference number again?",
        "What was the phone number you gave me earlier?",
        "Can you remind me of the postcode?",
        "Wie war die Nummer nochmal?",
        "Quel était le numéro déjà ?",
        "¿Me dices otra vez la referencia?",
        "さっきの番号は何ですか",
        "AGAIN please",
    ])  # fmt: skip
    def test_points_back(self, text: str):
        assert self.gate(text)

    @pytest.mark.parametrize("text", ["I need a taxi to the station.", "Book a table for two at 19:00", "gaining"])
    def test_does_not(self, text: str):
        assert not self.gate(text)

    def test_config_cues_are_the_module_defaults(self):
        assert RecallSettings().cues == DEFAULT_CUES

    def test_configured_cues_replace_the_defaults(self):
        gate = CueGate(["encore une fois"])
        assert gate("Encore une fois, svp") and not gate("What was it again?")
        assert not CueGate([])("again")


@pytest.fixture(scope="module")
def recall() -> Recall:
    return Recall()


def session(i: int) -> dict:
    with (SHARED_DATA / "dev_sessions.jsonl").open() as fh:
        return json.loads(fh.readlines()[i])


class TestRealModel:
    def test_embeddings_are_normalised_float32(self, recall: Recall):
        v = recall.embed(["Your reference number is U81JS4T8.", "Guten Tag"])
        assert v.shape == (2, DIMENSIONS) and v.dtype == np.float32
        assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
        assert recall.embed([]).shape == (0, DIMENSIONS)
        again = from_blob(to_blob(v[0]))
        assert np.array_equal(again, v[0])

    @pytest.mark.parametrize(("index", "fact_turn"), [(0, 5), (1, 9), (2, 15)])
    def test_picks_the_turn_that_states_the_reference(self, recall: Recall, index: int, fact_turn: int):
        """The booking reference of the session's first dialogue, asked for ~60 turns later."""
        data = session(index)
        probe = next(p for p in data["probes"] if p["kind"] == "reference")
        turns = [Turn("s", i, t["role"], t["text"]) for i, t in enumerate(data["turns"][: probe["after_turn"]])]
        assert any(x in turns[fact_turn].text for x in probe["expected"])
        older = turns[:-8]  # the last four pairs are in the prompt anyway
        vectors = recall.embed([t.text for t in older])
        assert recall.points_back(probe["question"])
        chosen = recall.select(probe["question"], older, vectors, 3, 0.3)
        assert fact_turn in chosen
        # Stored and read back as BLOBs, the choice is the same.
        restored = stack(to_blob(v) for v in vectors)
        assert recall.select(probe["question"], older, restored, 3, 0.3) == chosen
        assert recall.select(probe["question"], older, vectors, 3, 0.95) == ()

    def test_first_session_reference_is_the_best_match(self, recall: Recall):
        data = session(0)
        turns = [Turn("s", i, t["role"], t["text"]) for i, t in enumerate(data["turns"][:58])]
        chosen = recall.select(
            "Sorry, could you tell me the reference number again?", turns, recall.embed([t.text for t in turns]), 1, 0.3
        )
        assert chosen == (5,)


OFFLINE_LOAD = (
    NO_NETWORK
    + r"""
from appliance.context.recall import Recall
r = Recall()
print(r.embed(["hello"]).shape, attempts)
"""
)


def test_loads_and_embeds_with_network_impossible(tmp_path: Path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0"}
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE_LOAD], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == f"({1}, {DIMENSIONS}) []"
    assert not (tmp_path / "hf").exists() or not any((tmp_path / "hf").rglob("*.safetensors"))
