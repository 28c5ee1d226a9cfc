"""Execution engines of the batch runner: ``"local"`` (:mod:`.local`) and ``"ray"``
(:mod:`._ray_engine`, loaded only by a Ray run; :mod:`.worker` and :mod:`.batch_forms` are plain
Python)."""

from __future__ import annotations

from types import ModuleType

__all__ = ["load_ray_engine"]


def load_ray_engine() -> ModuleType:
    """:mod:`._ray_engine`, or an ``ImportError`` saying what to install."""
    try:
        from openevals.evaluation.engines import _ray_engine as module
    except ImportError as exc:
        if exc.name is None or exc.name.split(".")[0] not in ("ray", "pyarrow", "numpy"):
            raise
        raise ImportError(
            f"engine='ray' needs Ray Data ({exc.name} is missing); install it with "
            "`pip install 'openevals-suite[ray]'` (on the driver and on every worker node)"
        ) from None
    return module
