"""Checks for text that must leave the process as UTF-8: files, subprocesses, HTTP bodies.

Python strings may hold *surrogate code points* (U+D800 to U+DFFF) on their own, e.g. from
``"\\ud800"`` literals, ``bytes.decode(..., "surrogateescape")`` or a JSON string with an unpaired
``\\uXXXX`` escape. They are not Unicode characters and UTF-8 cannot encode them, so every sink
that writes text out (a type checker's source file, a sandbox upload, an embeddings request, a
tokenizer) fails on them with an anonymous ``UnicodeEncodeError`` somewhere deep inside.

:func:`check_text` finds the first one up front and raises a ``ValueError`` that names the
parameter, the position, and how to repair the text. Evaluators that only compare strings in
memory (exact match, Levenshtein) do not need it: surrogates compare like any other code point.
"""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")


class LoneSurrogateError(ValueError):
    """A text holds a surrogate code point, which cannot be encoded as UTF-8."""

    def __init__(self, message: str, *, parameter: str, index: int) -> None:
        super().__init__(message)
        self.parameter = parameter
        self.index = index


def first_surrogate(text: str) -> int | None:
    """Index of the first surrogate code point (U+D800..U+DFFF) in ``text``, or None."""
    match = _SURROGATE.search(text)
    return None if match is None else match.start()


def replace_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, the replacement character: what a
    sink that must write UTF-8 (Arrow, Parquet, pandas' string columns) can hold."""
    return _SURROGATE.sub("\ufffd", text)


def line_column(text: str, index: int) -> tuple[int, int]:
    """1-based ``(line, column)`` of ``text[index]``; lines end at ``\\n``."""
    line_start = text.rfind("\n", 0, index) + 1
    return text.count("\n", 0, index) + 1, index - line_start + 1


def check_text(text: str, parameter: str, *, of: str = "", sink: str = "") -> str:
    """Return ``text`` unchanged, or raise :class:`LoneSurrogateError` naming ``parameter``.

    ``of`` says which part of the parameter ``text`` is (e.g. ``"the code extracted from it"``)
    when it is not the parameter's whole value; ``sink`` says where the text was going (e.g.
    ``"mypy"``), for the message. Linear in ``len(text)``; allocates nothing for valid text.
    """
    index = first_surrogate(text)
    if index is None:
        return text
    line, column = line_column(text, index)
    where = f"index {index} (line {line}, column {column})"
    part = f" of {of}" if of else ""
    destination = f" for {sink}" if sink else ""
    raise LoneSurrogateError(
        f"`{parameter}` contains a lone surrogate code point U+{ord(text[index]):04X} at {where}"
        f"{part}; surrogates are not valid Unicode and cannot be encoded as UTF-8{destination}. "
        "Decode the original bytes correctly, or replace them first, e.g. "
        "text.encode('utf-8', 'replace').decode('utf-8')",
        parameter=parameter,
        index=index,
    )
