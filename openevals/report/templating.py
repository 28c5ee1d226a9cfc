"""The one Jinja2 environment builder of the package, and its number formatters.

Every HTML page the package renders (the run report, the notebook views, the comparison report,
the viewer's pages) comes from :func:`environment`: autoescaping on, so no cell text can inject
markup; undefined names an error (``StrictUndefined``) unless a caller opts out; and the number
filters registered once. The caller passes its own loader (its package's ``templates/`` folder, or
inline templates), so this module imports none of the packages whose templates it renders.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2

__all__ = ["decimals", "environment", "number"]


def number(value: float | None, spec: str = ".3f") -> str:
    """``value`` formatted with ``spec`` (``format(value, spec)``); ``"-"`` for ``None``."""
    return "-" if value is None else format(value, spec)


def decimals(value: Any, digits: int = 3) -> str:
    """The ``num`` filter: a number (``int`` or ``float``) to ``digits`` decimals; ``"-"`` for
    anything else (``None``, text)."""
    return "-" if not isinstance(value, (int, float)) else f"{value:.{digits}f}"


def environment(
    loader: jinja2.BaseLoader, *, keep_trailing_newline: bool = False, strict: bool = True
) -> jinja2.Environment:
    """A Jinja2 environment over ``loader`` with autoescaping, ``StrictUndefined`` (when
    ``strict``) and the ``num`` filter (:func:`decimals`)."""
    import jinja2

    env = jinja2.Environment(
        loader=loader,
        autoescape=True,
        undefined=jinja2.StrictUndefined if strict else jinja2.Undefined,
        keep_trailing_newline=keep_trailing_newline,
    )
    env.filters["num"] = decimals
    return env
