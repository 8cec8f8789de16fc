"""Recall: find the older verbatim turns that the customer's message points back to.

The only module that imports onnxruntime and tokenizers. The embedding model is all-MiniLM-L6-v2 as
an ONNX file with its WordPiece tokenizer (``tokenizer.json``), both catalogued in
``models/MODELS.toml`` (role ``embeddings``), placed by ``appliance models fetch`` and checked
against their sha256 by the composition root before they reach :class:`Recall`. No PyTorch: the
daemon carries onnxruntime (80 MB installed) instead of a 750 MB framework and what comes with it,
and one message embeds in a few milliseconds.

Vectors are computed as sentence-transformers computes them for this model (its reference stays in
the tests): tokens truncated at 256, the encoder's last hidden state mean-pooled over the attention
mask, then L2-normalised, so a dot product is the cosine similarity. The default file has int8
weights (the arithmetic is fp32); its vectors' cosine to sentence-transformers' is above 0.99 on
every dev turn, and recall chooses the same turns except where the reference's own scores tie at
the cut. The store keeps vectors as BLOBs (:func:`to_blob` / :func:`from_blob`) under the model's
catalogue name, so vectors of another model never mix with them. Choosing turns from stored vectors
(:func:`choose`) is a pure function; only :meth:`Recall.embed` runs the model, and the cheap gate
:meth:`Recall.points_back` keeps it off turns that do not look back at all.
"""

from __future__ import annotations

import os
import re
import threading
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from appliance.errors import ModelLoadError
from appliance.lexicon import each
from appliance.types import Turn

# The catalogue entry of the default embedding model (its name labels the stored vectors).
MODEL_NAME = "all-minilm-l6-v2-int8"
DIMENSIONS = 384
# sentence-transformers' max_seq_length for all-MiniLM-L6-v2 (tokenizer.json itself says 128).
MAX_TOKENS = 256
# Texts embedded in one run; similar lengths go together, so little is padded.
BATCH = 16

# Words that make a message point back at something said before: every lexicon's (the default of
# the config's ``recall.cues``).
DEFAULT_CUES: tuple[str, ...] = each(lambda lexicon: lexicon.recall)


def mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Sentence vectors from token states (batch, tokens, dims): the mean over the tokens the mask
    keeps, L2-normalised (sentence-transformers' Pooling(mean) and Normalize), as float32."""
    weights = np.asarray(mask, dtype=np.float32)[..., None]
    pooled = (np.asarray(hidden, dtype=np.float32) * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    unit: np.ndarray = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
    return unit


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
    """all-MiniLM-L6-v2 embeddings of turns on onnxruntime, and the choice of older turns to recall.

    ``model_file`` and ``tokenizer_file`` must already be verified (the composition root checks
    every model file against its pin); ``name`` is the catalogue entry, which labels the stored
    vectors. ``threads``: onnxruntime's threads for one embedding (at most the cores). Two by
    default: a message embeds while the responder waits for it, so its latency counts, and two
    threads embed faster than one even with llama.cpp busy on both cores (docs/measurements.md).
    The threads spin between the model's steps, which keeps the second one useful.

    Loads eagerly and embeds once (a daemon verifies and loads its models before it reports ready,
    and the first customer's message is not slower); one lock serialises the model.
    """

    def __init__(
        self,
        model_file: Path,
        tokenizer_file: Path,
        *,
        name: str = MODEL_NAME,
        cues: Sequence[str] = DEFAULT_CUES,
        threads: int = 2,
    ) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ModelLoadError(f"recall needs onnxruntime and tokenizers (runtime dependencies): {exc}") from None
        try:
            tokenizer = Tokenizer.from_file(str(tokenizer_file))
        except Exception as exc:  # tokenizers raises its own Exception subclass for a bad file
            raise ModelLoadError(f"cannot load the embedding tokenizer {tokenizer_file}: {exc}") from None
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        pad = tokenizer.token_to_id("[PAD]")
        tokenizer.enable_padding(pad_id=pad or 0, pad_token="[PAD]")  # to the longest text of a batch
        options = ort.SessionOptions()
        options.intra_op_num_threads = max(1, min(threads, os.cpu_count() or 1))
        options.inter_op_num_threads = 1
        # No memory arena: its buffers would stay at the largest batch's size for the daemon's life;
        # freed after each run, they cost no measurable time (docs/measurements.md).
        options.enable_cpu_mem_arena = False
        options.log_severity_level = 3  # errors only, in a daemon's journal
        try:
            session = ort.InferenceSession(str(model_file), sess_options=options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types for a bad file
            raise ModelLoadError(f"cannot load the embedding model {model_file}: {exc}") from None
        self._inputs = {i.name for i in session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= self._inputs:
            raise ModelLoadError(f"{model_file} is not a BERT encoder (inputs: {sorted(self._inputs)})")
        self._session = session
        self._tokenizer = tokenizer
        self._lock = threading.Lock()
        self.model_name = name
        self.model_file = Path(model_file)
        self.gate = CueGate(cues)
        self.dimensions = int(self._run(["recall"]).shape[1])  # also warms the session up

    def _run(self, texts: Sequence[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        return mean_pool(hidden, mask)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised float32 row per text, shape (len(texts), 384), in the order given."""
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        with self._lock:
            for start in range(0, len(order), BATCH):
                rows = order[start : start + BATCH]
                out[rows] = self._run([texts[i] for i in rows])
        return out

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
