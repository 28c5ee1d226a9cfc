"""The async twin of a run function whose sync form spells out its options.

The run functions (``evaluate``, ``calibrate``, ``cross_validate``, ``audit_judge``, ``compare``,
``sequential_compare``, ``run_multiturn_simulation``) keep an explicit signature, written once on
the sync function, so ``help()``, IDEs and ``mypy --strict`` see every option. :func:`async_entry` makes the async
function from it: the same signature and module, and a call that binds its arguments to that
signature (defaults applied) and awaits ``body(**arguments)``. The sync function passes its
options by name, once, to the one function that builds its options object (``RunOptions.from_call``,
or a plan's ``_plan_of_call``); the twin's body hands the same names to the same function.
Plans use :func:`openevals.evaluation.plans.async_plan_entry`, which builds on this.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def async_entry(
    sync: Callable[P, R], body: Callable[..., Awaitable[R]], *, name: str, doc: str
) -> Callable[P, Coroutine[Any, Any, R]]:
    """``async def name(...)`` with the signature of ``sync``: it binds a call's arguments as
    ``sync`` would (``TypeError`` for a missing or unknown one) and awaits ``body(**arguments)``."""
    signature = inspect.signature(sync)

    async def twin(*args: P.args, **kwargs: P.kwargs) -> R:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return await body(**bound.arguments)

    twin.__name__ = twin.__qualname__ = name
    twin.__module__ = sync.__module__
    twin.__doc__ = doc
    twin.__signature__ = signature  # type: ignore[attr-defined]
    twin.__annotations__ = dict(sync.__annotations__)
    return twin
