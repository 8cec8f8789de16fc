"""The appliance as the lab drives it: built the production way, around models loaded once per run.

The evaluation and ``bench perf`` replay many dialogues; loading a model per replay would dominate
the run, so they load the models once and build a fresh appliance (own database, own worker) per
replay with :func:`appliance_for`, which hands the models to :func:`appliance.app.build`. The
:class:`Recorder` wraps the responder to keep what was really sent to it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from appliance.config import Settings
from appliance.context import ContextPolicy
from appliance.errors import InputError
from appliance.protocols import ChatModel, OnToken, Recaller
from appliance.types import Generation, Message, Sampling

if TYPE_CHECKING:
    from appliance.app import Appliance


class Recorder:
    """Wraps the responder to keep the messages of each generation: what was really sent."""

    def __init__(self, model: ChatModel) -> None:
        self.model = model
        self.name = model.name
        self.n_ctx = model.n_ctx
        self.prompts: list[tuple[Message, ...]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    def count(self, messages: Sequence[Message]) -> int:
        return self.model.count(messages)

    def count_text(self, text: str) -> int:
        return self.model.count_text(text)

    def generate(
        self,
        messages: Sequence[Message],
        sampling: Sampling,
        *,
        on_token: OnToken | None = None,
        cancel: threading.Event | None = None,
        cache_key: str | None = None,
    ) -> Generation:
        self.prompts.append(tuple(messages))
        return self.model.generate(messages, sampling, on_token=on_token, cancel=cancel, cache_key=cache_key)


def appliance_for(
    settings: Settings,
    responder: ChatModel,
    summarizer: ChatModel | None,
    policy: str,
    *,
    recall: Recaller | None = None,
    prewarm: bool = False,
) -> Appliance:
    """The appliance over ``settings.database`` with the given (already loaded) models and recall
    (none: recall off), and a summary worker only when ``policy`` reads the summary and a
    ``summarizer`` is given; close it when the replay is done. The next prefix is warmed only with
    ``prewarm`` (the latency bench): elsewhere it would spend the replay's CPU on prompts never asked."""
    from appliance.app import build, policies

    summarized = summarizer is not None and policies(settings)[policy].uses_summary
    return build(
        settings,
        responder=responder,
        summarizer=summarizer,
        recall=recall if recall is not None else False,
        worker=summarized,
        prewarm=prewarm,
    )


def evolve(settings: Settings, **sections: Mapping[str, Any]) -> Settings:
    """A copy of ``settings`` with some fields of some sections replaced (no re-validation)."""
    updates = {name: getattr(settings, name).model_copy(update=dict(values)) for name, values in sections.items()}
    return settings.model_copy(update=updates)


def choose_policies(names: Sequence[str], known: Mapping[str, ContextPolicy]) -> dict[str, ContextPolicy]:
    """The named policies (all when none is named), in the order given."""
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InputError(f"unknown policy {', '.join(map(repr, unknown))} (known: {', '.join(known)})", field="policy")
    return {n: known[n] for n in (dict.fromkeys(names) or known)}
