"""Assembly: from settings to verified, loaded parts handed to the pipeline.

The edges (CLI, daemon) call these; the pipeline never reaches for a global.
"""

from __future__ import annotations

from .config import Settings
from .context import POLICIES
from .modelfiles import find, verified_path
from .pipeline import Pipeline, PipelineSettings
from .responder import ChatModel, Sampling
from .store import Store


def load_responder(settings: Settings) -> ChatModel:
    """Verify the responder's file against its pinned sha256, then load it."""
    from .llm import LlamaChatModel

    r = settings.responder
    entry = find(settings.models_dir, r.model)
    path = verified_path(settings.models_dir, entry)
    return LlamaChatModel(
        path, name=entry.name, n_ctx=r.n_ctx, n_threads=r.n_threads, n_gpu_layers=r.n_gpu_layers, seed=r.seed
    )


def load_summarizer(settings: Settings) -> ChatModel:
    """Verify the summarizer's file against its pinned sha256, then load it as a second llama.cpp instance."""
    from .llm import LlamaChatModel

    s = settings.summarizer
    entry = find(settings.models_dir, s.model)
    path = verified_path(settings.models_dir, entry)
    return LlamaChatModel(
        path, name=entry.name, n_ctx=s.n_ctx, n_threads=s.n_threads, n_gpu_layers=s.n_gpu_layers, seed=s.seed
    )


def pipeline_settings(settings: Settings) -> PipelineSettings:
    r = settings.responder
    return PipelineSettings(
        system_prompt=settings.chat.system_prompt,
        instruction=settings.chat.instruction,
        budget_tokens=settings.context.budget_tokens,
        max_message_chars=settings.chat.max_message_chars,
        default_policy=settings.context.policy,
        sampling=Sampling(
            temperature=r.temperature,
            top_p=r.top_p,
            top_k=r.top_k,
            repeat_penalty=r.repeat_penalty,
            max_tokens=r.max_tokens,
            seed=r.seed,
        ),
    )


def build_pipeline(settings: Settings, responder: ChatModel | None = None) -> Pipeline:
    """A pipeline over the configured database, with the given responder or the configured model."""
    model = responder if responder is not None else load_responder(settings)
    store = Store.open(settings.database)
    return Pipeline(store, model, POLICIES, pipeline_settings(settings))

