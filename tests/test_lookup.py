"""Prompt-lookup decoding: when an answer drafts (``responder.lookup``), how drafts are checked, its
settings, and a real model's answers with and without it."""

from __future__ import annotations

from pathlib import Path

import pytest

from appliance.config import load_settings
from appliance.errors import ConfigError
from appliance.models.lookup import drafting, verify
from appliance.types import Message, Sampling

from .support import MODELS_DIR, write_config

GREEDY = Sampling(temperature=0.0, max_tokens=48)
SAMPLED = Sampling(temperature=0.7)


class TestWhenAnAnswerDrafts:
    @pytest.mark.parametrize(
        ("mode", "sampling", "drafts"),
        [
            ("off", GREEDY, False),
            ("on", GREEDY, True),
            ("on", SAMPLED, True),
            ("auto", GREEDY, True),  # passages or read-back facts: the pipeline answers them greedily
            ("auto", SAMPLED, False),
            ("on", Sampling(temperature=0.0, ignore_eos=True), False),  # its ban on the end token is a processor
        ],
    )
    def test_the_rule(self, mode, sampling: Sampling, drafts: bool):
        assert drafting(mode, sampling) is drafts


class TestVerify:
    def test_drafts_are_kept_up_to_the_first_the_model_would_not_pick(self):
        picks = [5, 6, 9, 1]
        step = verify([5, 6, 7], lambda i: picks[i])
        assert step.picked == (5, 6, 9) and step.kept == 2

    def test_all_kept_give_one_token_more(self):
        step = verify([5, 6], lambda i: [5, 6, 8][i])
        assert step.picked == (5, 6, 8) and step.kept == 2

    def test_no_drafts_pick_one_token(self):
        assert verify([], lambda i: 4).picked == (4,)


class TestSettings:
    def test_defaults_and_values(self, tmp_path: Path):
        assert load_settings(write_config(tmp_path), env={}).responder.lookup == "off"
        cfg = write_config(tmp_path, '[responder]\nlookup = "auto"\nlookup_tokens = 12\n')
        responder = load_settings(cfg, env={}).responder
        assert (responder.lookup, responder.lookup_tokens) == ("auto", 12)

    @pytest.mark.parametrize(
        ("body", "key", "hint"),
        [
            ('lookup = "yes"', "responder.lookup", "'off', 'on' or 'auto'"),
            ("lookup_tokens = 0", "responder.lookup_tokens", "greater than or equal to 1"),
            ("lookup_tokens = 65", "responder.lookup_tokens", "less than or equal to 64"),
        ],
    )
    def test_errors_name_the_file_and_key(self, tmp_path: Path, body: str, key: str, hint: str):
        cfg = write_config(tmp_path, f"[responder]\n{body}\n")
        with pytest.raises(ConfigError) as info:
            load_settings(cfg, env={})
        assert str(cfg) in str(info.value) and key in str(info.value) and hint in str(info.value)


PASSAGE = (
    "Passage (fees): What does a transfer within the UK cost?\n"
    "A transfer within the UK made online or in the app is free. A transfer handed in at the counter "
    "costs £2. A same-day CHAPS payment costs £25."
)


def _asked(question: str) -> list[Message]:
    return [
        Message("system", "Answer from the passage, in its words."),
        Message("user", f"[CONTEXT]\n{PASSAGE}\n\n[QUESTION]\n{question}"),
    ]


@pytest.mark.real_model
class TestRealModel:
    @pytest.fixture(scope="class")
    def model(self):
        from appliance.models.llama import LlamaChatModel

        return LlamaChatModel(MODELS_DIR / "SmolLM2-135M-Instruct.Q4_1.gguf", name="tiny", n_ctx=1024, lookup="on")

    def _both(self, model, messages: list[Message], sampling: Sampling):
        answers = {}
        for mode in ("off", "on"):
            model.lookup = mode
            with model.native() as llama:
                llama.reset()
            answers[mode] = model.generate(messages, sampling)
        return answers["off"], answers["on"]

    def test_without_drafts_the_loop_answers_as_llama_cpp_python_does(self, model):
        model.lookup_tokens = 0  # one token a decode: the same numbers as create_completion's
        for question, sampling in (("What does CHAPS cost?", GREEDY), ("Say hello.", Sampling(max_tokens=5, seed=7))):
            off, on = self._both(model, _asked(question), sampling)
            assert (on.text, on.completion_tokens, on.finish_reason) == (
                off.text,
                off.completion_tokens,
                off.finish_reason,
            )

    def test_greedy_text_is_the_same_with_drafts_and_drafts_are_kept(self, model):
        model.lookup_tokens = 8
        before = model.drafts.kept
        off, on = self._both(model, _asked("What does CHAPS cost?"), GREEDY)
        assert on.text == off.text and on.completion_tokens == off.completion_tokens
        assert model.drafts.kept > before
