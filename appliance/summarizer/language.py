"""The language a conversation is in, as lingua detects it among the configured languages
(``summarizer.languages``): a summary must keep it, and the turn answers and looks up in it.

The only importer of ``lingua``; its detectors are built once per set of languages.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from appliance.errors import ConfigError
from appliance.types import Turn


def detect_language(text: str, languages: Sequence[str], *, quick: bool = False) -> str | None:
    """The ISO 639-1 code of ``text``'s language among ``languages``, or None when unsure.

    Restricting lingua to the configured languages keeps it fast and its memory small; with a single
    language there is nothing to decide. ``quick``: lingua's low-accuracy mode (trigrams only), which
    loads in a tenth of a second and holds about 10 MB where the full models take seconds and over
    150 MB: for a decision on the answer's path that can fall back when unsure (the fetch check).
    """
    codes = tuple(dict.fromkeys(code.lower() for code in languages))
    if not codes or not re.search(r"[^\W\d_]{3}", text):
        return None
    if len(codes) == 1:
        return codes[0]
    found = _detector(codes, quick).detect_language_of(text)
    return found.iso_code_639_1.name.lower() if found is not None else None


def load_quick_detector(languages: Sequence[str]) -> None:
    """Load the quick detector's models for ``languages`` now, not at the first question that asks
    for it: the fetch check detects on the answer's path."""
    codes = tuple(dict.fromkeys(code.lower() for code in languages))
    if len(codes) > 1:
        _detector(codes, True).detect_language_of("Where is the nearest branch?")


@functools.lru_cache(maxsize=4)
def _detector(codes: tuple[str, ...], quick: bool = False):  # type: ignore[no-untyped-def]
    from lingua import IsoCode639_1, LanguageDetectorBuilder

    try:
        isos = [getattr(IsoCode639_1, code.upper()) for code in codes]
    except AttributeError as exc:
        raise ConfigError(f"summarizer.languages: unknown language code {(exc.name or '').lower()!r}") from None
    # The minimum distance makes the detector say "unsure" (None) rather than guess on short text.
    builder = LanguageDetectorBuilder.from_iso_codes_639_1(*isos).with_minimum_relative_distance(0.1)
    return (builder.with_low_accuracy_mode() if quick else builder).build()


def customer_language(turns: Sequence[Turn], languages: Sequence[str], *, quick: bool = False) -> str | None:
    """The language the customer writes in (their last few messages), or None when unsure."""
    said = [t.text for t in turns if t.role == "customer"][-6:] or [t.text for t in turns][-6:]
    return detect_language(" ".join(said)[-2000:], languages, quick=quick) if said else None


def conversation_language(turns: Sequence[Turn], languages: Sequence[str]) -> str:
    """The language the customer writes in (their last few messages), else the first configured one."""
    return customer_language(turns, languages) or languages[0].lower()
