"""``appliance bench batch`` on the tiny real model: bare llama.cpp's timings, the engine beside them,
and answers shaped like the daemon's, one after another against side by side, each on the weights
as its own ``parallel`` lays them out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from appliance.config import load_settings
from appliance.lab.bench.batch import format_text, run_batch
from appliance.models.batch_context import answers_seconds, batch_context, fill
from appliance.models.files import find, verified_path
from appliance.models.llama import LlamaChatModel
from appliance.types import Message

from .support import MODELS_DIR, TEST_MODEL, write_config
from .test_daemon import model_config

pytestmark = pytest.mark.real_model

SMALL: dict[str, Any] = {"threads": 1, "steps": 4, "chunk": 8, "rounds": 1}  # a few steps of each measurement


@pytest.fixture(scope="module")
def model() -> LlamaChatModel:
    # One thread, as SMALL's: llama.cpp's threads wait for each other on a busy 2-core box.
    path = verified_path(MODELS_DIR, find(MODELS_DIR, TEST_MODEL))
    return LlamaChatModel(path, name=TEST_MODEL, n_ctx=512, n_threads=1)


class TestAnswersSeconds:
    def test_answers_one_after_another_and_side_by_side_leave_each_sequence_its_prefix(
        self, model: LlamaChatModel
    ) -> None:
        """llama.cpp refuses a batch whose positions do not follow on in a sequence, so runs that end
        prove every piece and step went to its own sequence at its place; each answer is forgotten
        down to the kept prefix before the next starts there."""
        import llama_cpp

        warm = model.tokens([Message("user", "Hello there.")])
        # 30 tokens: several pieces of 8 and of 1 (a longer prompt only makes the chunk-1 run slower)
        prompt = model.tokens([Message("user", "Name three colours, please.")], open_end=True)
        context = batch_context(model, 3, len(warm) + len(prompt) + 16)
        memory = llama_cpp.llama_get_memory(context.ctx)
        try:
            for n, chunk in ((1, 64), (3, 8), (3, 1)):
                assert answers_seconds(context, warm, prompt, 6, n, chunk=chunk, each=2) > 0
                ends = [llama_cpp.llama_memory_seq_pos_max(memory, s) + 1 for s in range(n)]
                assert ends == [len(warm)] * n
            fill(context, [0], warm)  # the context is still usable after them
        finally:
            context.close()


def test_bench_batch_runs_end_to_end_with_both_layouts(tmp_path: Path) -> None:
    settings = load_settings(write_config(tmp_path, model_config(8)))
    report = run_batch(settings, **SMALL, prompt_tokens=24, engine_seqs=2, answer_prompt=12, answer_tokens=3)
    # repack = "auto": the engine's weights repacked, parallel = 1's as in the file: loaded twice
    assert report["repacked"] == {"batched": True, "alone": False}
    assert len(report["decode_tps_alone_weights"]) == 1 and report["decode_tps_alone_weights"][0] > 0
    assert set(report["decode_ratio_to_one_alone_weights"]) == {"1", "2", "4", "8"}
    answers = report["answers"]
    assert (answers["n"], answers["each"], answers["prompt_tokens"], answers["tokens"]) == (2, 4, 12, 3)
    assert answers["one_after_another_s"][0] > 0 and answers["side_by_side_s"][0] > 0 and answers["ratio"] > 0
    assert len(report["engine_tps"]) == 1 and report["same_answers"]["answers"] == 2
    text = format_text(report)
    assert "2 x 4 answers of 12 prompt + 3 generated tokens: one after another" in text
    assert "1 sequence on parallel = 1's weights (repacked: False)" in text


def test_with_one_layout_the_model_is_loaded_once(tmp_path: Path) -> None:
    settings = load_settings(write_config(tmp_path, model_config(8, "")), overrides=["responder.repack=off"])
    report = run_batch(settings, **SMALL, prompt_tokens=16, engine_seqs=0, answer_prompt=8, answer_tokens=2)
    assert report["repacked"] == {"batched": False, "alone": False}
    assert report["decode_tps_alone_weights"] is None and report["engine_tps"] == []
    assert report["answers"]["n"] == 4 and report["same_answers"] is None
