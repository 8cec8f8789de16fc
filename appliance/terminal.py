"""Text from customers, the model and the daemon, made safe to show on a terminal.

A terminal obeys what it is sent: ``\\x1b[2J`` in an answer clears the screen, an OSC 52 sequence
writes the operator's clipboard, OSC 8 hides a link behind harmless words, a lone ``\\r`` or a bidi
override makes a line say something else than what is stored. So every character a terminal could
take as an instruction is replaced by a visible stand-in of the same length (offsets into the text,
such as the guard's highlights, still hold): C0 controls by their Unicode control pictures (ESC
shows as ``␛``), DEL by ``␡``; C1 controls, bidi embeddings/overrides/isolates and lone surrogates
(which cannot even be encoded for the terminal) by ``�``. Line breaks stay line breaks: ``\\n``,
U+2028, U+2029 and NEL (U+0085) become ``\\n``, ``\\r\\n`` becomes `` \\n``. Tabs stay.

A leaf, pure and free of Textual and Rich, so ``appliance chat`` (the CLI edge) shows answers
through the same rule as the TUI. Markup is not this module's concern: widgets get ``Text`` objects,
never markup.
"""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"
# What a terminal may act on: C0 but tab and newline, DEL, C1, the Unicode line and paragraph
# separators, bidi embeddings, overrides and isolates, lone surrogates; and CR with its LF.
_UNSAFE = re.compile("\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _stand_in(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\r\n":
        return " \n"
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)  # the control pictures: ␀ … ␟ (␛ for ESC, ␍ for a lone CR)
    if code == 0x7F:
        return "\u2421"  # ␡
    if char in "\x85\u2028\u2029":
        return "\n"
    return REPLACEMENT


def visible(text: str) -> str:
    """``text`` with every character a terminal could obey replaced by a visible one; same length."""
    return _UNSAFE.sub(_stand_in, text)


def one_line(text: str) -> str:
    """``text`` on one line: :func:`visible`, then every run of whitespace (line breaks too) one space."""
    return " ".join(visible(text).split())
