"""The verify-and-loads of the parts: each model file checked against its pinned sha256, then loaded
with its section's settings (or served elsewhere, ``backend = "remote"``), several side by side.

:func:`~appliance.app.build` runs them; the commands and benches that need one part alone (a model,
the encoder, the responder's token counter) call them directly.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from appliance.config import ResponderSettings, Settings, SummarizerSettings, read_token_file
from appliance.models.files import CATALOG_NAME, find, load_catalog, state, verified_path
from appliance.protocols import ChatModel, Recaller, TokenCounter

T = TypeVar("T")


def load_model(
    settings: Settings, name: str, knobs: ResponderSettings | SummarizerSettings, *, bare: bool = False
) -> ChatModel:
    """Verify a catalogued model's file against its pinned sha256, then load it with these settings.

    With ``backend = "remote"`` the model is served elsewhere instead (see :func:`load_remote`).
    ``bare`` keeps a batched model's single context as large as ``n_ctx`` (the lab's bare timings).
    """
    from appliance.models.llama import LlamaChatModel

    if knobs.backend == "remote":
        return load_remote(settings, name, knobs)
    entry = find(settings.models_dir, name)
    path = verified_path(settings.models_dir, entry)
    load: Callable[..., ChatModel] = LlamaChatModel
    if isinstance(knobs, ResponderSettings) and knobs.parallel > 1:  # several customers' answers decoded together
        from appliance.models.batched import BatchedChatModel

        load = functools.partial(BatchedChatModel, parallel=knobs.parallel, bare=bare)
    return load(
        path,
        name=entry.name,
        n_ctx=knobs.n_ctx,
        n_threads=knobs.n_threads,
        n_gpu_layers=knobs.n_gpu_layers,
        seed=knobs.seed,
        state_cache_mb=knobs.state_cache_mb if isinstance(knobs, ResponderSettings) else 0,
        repack=isinstance(knobs, ResponderSettings) and knobs.repacked,
        **(
            {"lookup": knobs.lookup, "lookup_tokens": knobs.lookup_tokens}
            if isinstance(knobs, ResponderSettings)
            else {}
        ),
    )


def load_remote(settings: Settings, name: str, knobs: ResponderSettings | SummarizerSettings) -> ChatModel:
    """A model on an OpenAI-compatible server, counted by a local vocab-only copy of its GGUF where
    there is one (exact: the model's own chat template) and by the server's tokenizer otherwise.

    The section's ``remote_model`` names its own model on the server; other catalogue names sent
    through the same section (``routing.early``, ``refine.model``) are sent as they are. A local copy
    is used only when ``name`` is catalogued and its file is there, and is verified like any model.
    """
    from appliance.models.llama import LlamaChatModel
    from appliance.models.remote import open_remote

    local = None
    if knobs.remote_tokenizer != "server":
        catalog = load_catalog(settings.models_dir) if (settings.models_dir / CATALOG_NAME).is_file() else ()
        entry = next((e for e in catalog if e.name == name), None)
        if knobs.remote_tokenizer == "local" or (entry is not None and state(settings.models_dir, entry) != "missing"):
            entry = entry or find(settings.models_dir, name)  # names the catalogue's entries when it is absent
            path = verified_path(settings.models_dir, entry)
            local = LlamaChatModel(path, name=entry.name, n_ctx=knobs.n_ctx, vocab_only=True)
    served = (knobs.remote_model or name) if name == knobs.model else name
    section = "responder" if isinstance(knobs, ResponderSettings) else "summarizer"
    token = read_token_file(Path(knobs.token_file), f"{section}.token_file") if knobs.token_file else None
    return open_remote(
        knobs.base_url,
        served,
        n_ctx=knobs.n_ctx,
        token=token,
        local=local,
        tokenizer=knobs.remote_tokenizer,
    )


def load_responder(settings: Settings, *, bare: bool = False) -> ChatModel:
    return load_model(settings, settings.responder.model, settings.responder, bare=bare)


def load_summarizer(settings: Settings) -> ChatModel:
    """The summarizer: a second llama.cpp instance with its own model and settings."""
    return load_model(settings, settings.summarizer.model, settings.summarizer)


def load_recall(settings: Settings) -> Recaller | None:
    """The embedding model for recall, or None when recall is off."""
    if not settings.recall.enabled:
        return None
    from appliance.context.recall import Recall
    from appliance.models.files import embedding_files

    files = embedding_files(settings.models_dir)  # both files checked against their sha256 first
    return Recall(files.model, files.tokenizer, name=files.name, cues=settings.recall.cues)


def _load_detector(settings: Settings) -> None:
    from appliance.summarizer.language import load_quick_detector

    load_quick_detector(settings.summarizer.languages)


def load_encoder(settings: Settings) -> Recaller:
    """The all-MiniLM-L6-v2 encoder (recall's model, files verified), whether or not recall is on:
    the knowledge base embeds with it too."""
    from appliance.context.recall import Recall
    from appliance.models.files import embedding_files

    files = embedding_files(settings.models_dir)
    return Recall(files.model, files.tokenizer, name=files.name, cues=settings.recall.cues)


def token_counter(settings: Settings) -> TokenCounter:
    """The responder's token counter without its weights (a vocab-only load of its verified file, or
    the remote backend's counting): passages are sized in the tokens the responder will see."""
    from appliance.context.tokens import ResponderCounter
    from appliance.models.llama import LlamaChatModel

    r = settings.responder
    if r.backend == "remote":
        return ResponderCounter(load_remote(settings, r.model, r))
    entry = find(settings.models_dir, r.model)
    model = LlamaChatModel(verified_path(settings.models_dir, entry), name=entry.name, n_ctx=r.n_ctx, vocab_only=True)
    return ResponderCounter(model)


def load_concurrently(loads: dict[str, Callable[[], T]], *, workers: int | None = None) -> dict[str, T]:
    """Run the parts' verify-and-loads side by side, as many at once as there are cores (at least
    two), started in the order given, and return them by name; if any fails, raise the first failure
    in the order given, once every load has ended (none is left running) and the parts that did load
    are closed (a batched model's decode thread stops with it).

    Hashing a file and llama.cpp's and onnxruntime's loads release the GIL and each keeps one core
    busy. The first load (the responder's: the largest file, the start's critical path) keeps a core
    to itself; on two cores the others follow one another on the second core instead of slowing it.
    """
    workers = max(1, min(len(loads), workers or max(2, os.cpu_count() or 1)))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="load") as pool:
        futures: dict[str, Future[T]] = {name: pool.submit(load) for name, load in loads.items()}
    errors = [error for future in futures.values() if (error := future.exception()) is not None]
    if errors:
        for future in futures.values():
            if future.exception() is None:
                _close(future.result())
        raise errors[0]
    return {name: future.result() for name, future in futures.items()}


def _close(part: object) -> None:
    """Close a loaded part that can be closed (a model; the imports' list and a detector cannot)."""
    close = getattr(part, "close", None)
    if callable(close):
        close()


def pending_loads(
    settings: Settings,
    responder: ChatModel | None,
    summarizer: ChatModel | None,
    recall: Recaller | bool | None,
    summarize: bool,
    modules: Sequence[str],
) -> dict[str, Callable[[], Any]]:
    """The verify-and-loads of the parts :func:`~appliance.app.build` was not given (the responder's
    first: the start's critical path; the summarizer's only where a worker will ``summarize``), and
    last the imports of ``modules`` (the rest of the appliance, and what the caller needs next)."""
    loads: dict[str, Callable[[], Any]] = {}
    if responder is None:
        loads["responder"] = lambda: load_responder(settings)
    if summarize and summarizer is None:
        loads["summarizer"] = lambda: load_summarizer(settings)
    if recall is True:
        loads["recall"] = lambda: load_recall(settings)
        if settings.knowledge.enabled and not settings.recall.enabled:
            loads["encoder"] = lambda: load_encoder(settings)  # recall's model, for the knowledge base alone
    if recall is True and settings.knowledge.enabled:
        loads["languages"] = lambda: _load_detector(settings)  # the fetch check reads the customer's language
    # Batched too when responder.parallel > 1: both answer on the hot path, in as many queue jobs at once.
    if settings.routing.early:
        loads["early"] = lambda: load_model(settings, settings.routing.early, settings.responder)
    if settings.refine.enabled:
        loads["refiner"] = lambda: load_model(settings, settings.refine.model, settings.responder)
    loads["imports"] = lambda: [importlib.import_module(name) for name in modules]  # last: after the models
    return loads
