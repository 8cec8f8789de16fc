"""The seeds' rules act at the defaults: seed 003's threshold sits below the budget, its first message
is the last thing to give way."""

from __future__ import annotations

from pathlib import Path

import pytest

from appliance.config import Settings, load_settings
from appliance.context import PromptSpec, ThresholdPolicy
from appliance.errors import ConfigError
from appliance.types import Session, Snapshot, SummaryVersion, Turn

from .fakes import FakeResponder
from .support import write_config


def snapshot(texts: list[str], summary: SummaryVersion | None = None) -> Snapshot:
    turns = tuple(Turn("s", i, "customer" if i % 2 == 0 else "agent", t) for i, t in enumerate(texts))
    return Snapshot(Session("s", 0.0, policy="threshold"), turns, summary)


class TestThresholdKeepsTheFirstMessage:
    OPENING = "Hello, my name is Ada Quill and my card ending 4821 was swallowed by the machine."
    TEXTS = [OPENING] + [f"Later message {i} " + "with many extra words " * 6 for i in range(1, 12)]

    def test_under_budget_pressure_later_turns_give_way_before_the_first_message(self):
        summary = SummaryVersion("s", 1, "The card was swallowed; a replacement is on its way.", covers_to=5)
        counter = FakeResponder()  # one token per word
        spec = PromptSpec(system="You help.", instruction="Reply briefly.", budget=150)
        prompt = ThresholdPolicy(threshold=20).build(snapshot(self.TEXTS, summary), "Any news?", spec, counter)
        m = prompt.manifest
        assert 0 in m.verbatim_turns and self.OPENING in prompt.messages[-1].content
        assert m.cut_turns and 0 not in m.cut_turns  # later turns (and the summary) went first
        assert m.total_tokens <= 150

    def test_the_first_message_goes_only_when_nothing_else_is_left(self):
        counter = FakeResponder()
        bare = ThresholdPolicy(threshold=20).build(
            snapshot([]), "Any news?", PromptSpec(system="You help.", instruction="Reply briefly.", budget=500), counter
        )
        spec = PromptSpec(system="You help.", instruction="Reply briefly.", budget=bare.manifest.total_tokens + 3)
        prompt = ThresholdPolicy(threshold=20).build(snapshot(self.TEXTS), "Any news?", spec, counter)
        assert prompt.manifest.verbatim_turns == () and set(prompt.manifest.cut_turns) == set(range(12))


class TestThresholdSettings:
    def test_the_default_threshold_leaves_room_for_the_summary_in_the_budget(self):
        settings = Settings()
        assert settings.threshold_tokens + settings.summarizer.max_tokens <= settings.context.budget_tokens
        assert 0 < settings.threshold_tokens < settings.context.budget_tokens

    def test_the_default_follows_the_budget(self, tmp_path: Path):
        small = load_settings(write_config(tmp_path, "[context]\nbudget_tokens = 512\n"), env={})
        assert small.threshold_tokens == 512 - small.summarizer.max_tokens

    def test_the_policy_gets_the_resolved_threshold(self, settings: Settings):
        from appliance.app import policies

        threshold = policies(settings)["threshold"]
        assert isinstance(threshold, ThresholdPolicy) and threshold.threshold == settings.threshold_tokens

    def test_a_threshold_the_budget_cannot_hold_is_refused_naming_both_keys(self, tmp_path: Path):
        config = write_config(tmp_path, "[context]\nbudget_tokens = 768\nthreshold_tokens = 1000\n")
        with pytest.raises(ConfigError) as caught:
            load_settings(config, env={})
        message = str(caught.value)
        assert "context.threshold_tokens" in message and "context.budget_tokens" in message
        assert str(config) in message
