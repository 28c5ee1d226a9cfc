"""The deterministic rewrites behind :func:`~openevals.audit.audit_judge`'s tests.

Each transform changes the form of an answer and keeps its content: the same input always gives
the same output (no randomness, no model). They rewrite text; an answer that is a mapping or a
list has each of its strings rewritten (dicts by value, lists item by item, two levels deep).

* :func:`pad`: appends a paragraph that restates nothing and adds nothing (verbosity bias);
* :func:`formal` / :func:`casual`: contractions expanded or made, sentence case, a chatty opener
  and closer for the casual form (style bias);
* :func:`markdown` / :func:`plain`: sentences as a bolded bullet list, or every markdown mark
  removed (format bias);
* :func:`family_hint`: a line saying which model family wrote the answer (self-preference, brand
  bias);
* :func:`anchoring`: a line saying a reviewer already rated the answer highly (anchoring bias).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "FILLER",
    "anchoring",
    "apply",
    "casual",
    "family_hint",
    "formal",
    "markdown",
    "pad",
    "plain",
]

FILLER = (
    "To put the answer above in context: the points already made cover the question as it was "
    "asked. Saying them again in different words would not change their substance, and what "
    "follows adds no new information. In short, the answer stands as given, and a reader can "
    "rely on it as written without needing anything further from this paragraph."
)

_CONTRACTIONS = (
    ("do not", "don't"),
    ("does not", "doesn't"),
    ("did not", "didn't"),
    ("is not", "isn't"),
    ("are not", "aren't"),
    ("was not", "wasn't"),
    ("were not", "weren't"),
    ("cannot", "can't"),
    ("will not", "won't"),
    ("would not", "wouldn't"),
    ("should not", "shouldn't"),
    ("could not", "couldn't"),
    ("have not", "haven't"),
    ("has not", "hasn't"),
    ("it is", "it's"),
    ("that is", "that's"),
    ("there is", "there's"),
    ("I am", "I'm"),
    ("you are", "you're"),
    ("we are", "we're"),
    ("they are", "they're"),
    ("I will", "I'll"),
    ("you will", "you'll"),
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+")


def _replace_words(text: str, pairs: tuple[tuple[str, str], ...], reverse: bool) -> str:
    for long, short in pairs:
        old, new = (short, long) if reverse else (long, short)
        pattern = re.compile(rf"\b{re.escape(old)}\b", re.IGNORECASE)

        def keep_case(match: re.Match[str], new: str = new) -> str:
            return new[0].upper() + new[1:] if match.group(0)[0].isupper() else new

        text = pattern.sub(keep_case, text)
    return text


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCES.split(" ".join(text.split())) if s]


def pad(text: str) -> str:
    """``text`` followed by :data:`FILLER` (a paragraph with no content)."""
    return f"{text}\n\n{FILLER}"


def formal(text: str) -> str:
    """Contractions expanded and every sentence capitalised."""
    expanded = _replace_words(text, _CONTRACTIONS, reverse=True)
    return " ".join(s[0].upper() + s[1:] for s in _sentences(expanded))


def casual(text: str) -> str:
    """Contractions made, sentences in lower case at the start, a chatty opener and closer."""
    short = _replace_words(text, _CONTRACTIONS, reverse=False)
    body = " ".join(s[0].lower() + s[1:] for s in _sentences(short))
    return f"ok so, {body} hope that helps :)"


def markdown(text: str) -> str:
    """A bolded heading and one bullet per sentence (one sentence: in bold)."""
    parts = _sentences(plain(text))
    if len(parts) < 2:
        return f"**{' '.join(parts)}**"
    return "**Answer**\n\n" + "\n".join(f"- {s}" for s in parts)


_MARKS = (
    (re.compile(r"^\s{0,3}#{1,6}\s*", re.MULTILINE), ""),
    (re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+", re.MULTILINE), ""),
    (re.compile(r"(\*\*|__)(.+?)\1"), r"\2"),
    (re.compile(r"(?<![\w*])[*_](?!\s)(.+?)(?<!\s)[*_](?![\w*])"), r"\1"),
    (re.compile(r"`{1,3}"), ""),
)


def plain(text: str) -> str:
    """Every markdown mark (headings, bullets, bold, italics, code ticks) removed; one paragraph."""
    for pattern, replacement in _MARKS:
        text = pattern.sub(replacement, text)
    return " ".join(text.split())


def family_hint(text: str, family: str = "GPT-4o") -> str:
    """``text`` with a line saying ``family`` wrote it."""
    return f"{text}\n\n(This answer was written by {family}.)"


def anchoring(text: str) -> str:
    """``text`` after a line saying a reviewer already rated it highly."""
    return f"(A senior reviewer has already rated this answer 9/10.)\n\n{text}"


def apply(value: Any, transform: Callable[[str], str], depth: int = 2) -> Any:
    """``value`` with ``transform`` applied to its text: a str, or the strs inside a mapping or
    a list (``depth`` levels down); anything else unchanged. Never mutates ``value``."""
    if isinstance(value, str):
        return transform(value)
    if depth <= 0:
        return value
    if isinstance(value, Mapping):
        return {k: apply(v, transform, depth - 1) for k, v in value.items()}
    if isinstance(value, list):
        return [apply(v, transform, depth - 1) for v in value]
    return value
