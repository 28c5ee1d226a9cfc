"""Execution engines of the batch runner (``evaluate(..., engine=...)``).

* ``"local"`` - one process, one event loop (:mod:`openevals.evaluation.runner`).
* ``"ray"`` - rows go to Ray Data workers in batches (:mod:`._ray_engine`); the driver keeps the
  records, the ``output=`` file, statistics and batch metrics, so results equal the local
  engine's.

Nothing here imports Ray until a Ray run starts: :mod:`._ray_engine` and :mod:`._ray_cache` are
loaded only by ``engine="ray"``. :mod:`.worker` and :mod:`.batch_forms` are plain Python (the
worker side of a Ray run, and the ``batch`` forms of evaluators).
"""

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
            "`pip install 'openevals[ray]'` (on the driver and on every worker node)"
        ) from None
    return module
