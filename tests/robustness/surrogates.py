"""Hypothesis strategies for text holding lone surrogates (U+D800..U+DFFF), which UTF-8 cannot
encode; shared by the robustness tests."""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["ANY_TEXT", "SURROGATES", "VALID_TEXT", "text_with_surrogate"]

SURROGATES = st.integers(min_value=0xD800, max_value=0xDFFF).map(chr)
"""One surrogate code point."""

VALID_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
"""Text UTF-8 can encode: any code point except surrogates (astral characters included)."""

ANY_TEXT = st.text(max_size=20)
"""Any text, surrogates included."""


@st.composite
def text_with_surrogate(draw: st.DrawFn) -> tuple[str, int]:
    """``valid text + a surrogate + any text``, and the index of the first surrogate."""
    head = draw(VALID_TEXT)
    return head + draw(SURROGATES) + draw(ANY_TEXT), len(head)
