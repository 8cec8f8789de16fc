"""The stored embeddings of a session's turns: what recall compares a message that points back with.

Each turn is embedded once, the first time recall may choose it (or ahead, off the answer's path:
:meth:`~appliance.turn.warmup.Warmup.embed_ahead`), and stored under the embedding model's name,
so a message that points back embeds only itself.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from appliance.protocols import Recaller
from appliance.store import Store
from appliance.types import Turn


def vectors(store: Store, recall: Recaller, session_id: str, turns: Sequence[Turn]) -> np.ndarray:
    """Embeddings of ``turns`` (one row each), computing and storing any not stored yet."""
    from appliance.context.recall import from_blob

    stored, _ = embedded(store, recall, session_id, turns)
    return np.stack([from_blob(stored[t.index]) for t in turns])


def embedded(store: Store, recall: Recaller, session_id: str, turns: Sequence[Turn]) -> tuple[dict[int, bytes], int]:
    """The session's stored vectors with those of ``turns`` computed and stored where missing, and
    how many were missing."""
    from appliance.context.recall import to_blob

    stored = store.embeddings(session_id, recall.model_name)
    missing = [t for t in turns if t.index not in stored]
    if missing:
        fresh = recall.embed([t.text for t in missing])
        blobs = [(t.index, to_blob(v)) for t, v in zip(missing, fresh)]
        store.put_embeddings(session_id, recall.model_name, blobs)
        stored.update(blobs)
    return stored, len(missing)
