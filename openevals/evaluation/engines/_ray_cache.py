"""The judge cache of a Ray run, shared by every worker.

A :class:`~openevals.evaluation.cache.CacheBackend` whose storage belongs to one machine (the
default SQLite file, an in-memory dict) is opened once, inside a :class:`CacheActor` pinned to the
driver's node; workers hold a :class:`ActorCache`, which forwards ``get`` / ``set`` to it. A
backend with ``shared_storage = True`` (Redis, a database server) needs no actor: each worker
reopens its own copy from the pickle (:func:`worker_cache`).

Imported only by a Ray run (it imports ``ray``).
"""

from __future__ import annotations

import pickle
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from openevals.evaluation.cache import shares_storage


class CacheActor:
    """Holds the run's one cache backend (unpickled, i.e. reopened, in the actor's process)."""

    def __init__(self, backend: bytes) -> None:
        self.backend = pickle.loads(backend)

    def get(self, key: str) -> dict[str, Any] | None:
        value: dict[str, Any] | None = self.backend.get(key)
        return value

    def set(self, key: str, value: dict[str, Any]) -> None:
        self.backend.set(key, value)

    def features(self) -> tuple[bool, bool]:
        """``(replay_only, describes_requests)`` of the backend (a replaying cassette: both)."""
        return (
            bool(getattr(self.backend, "replay_only", False)),
            callable(getattr(self.backend, "describe_request", None)),
        )

    def describe_request(self, key: str, material: dict[str, Any]) -> None:
        self.backend.describe_request(key, material)

    def miss(self, key: str, stale: bool) -> Exception:
        error: Exception = self.backend.miss(key, stale)
        return error

    def close(self) -> None:
        close = getattr(self.backend, "close", None)
        if callable(close):
            close()


class ActorCache:
    """A worker's view of the :class:`CacheActor`: ``get`` / ``set`` wait for the actor, so an
    answer stored by one worker is seen by the next lookup anywhere."""

    shared_storage = True

    def __init__(self, actor: Any) -> None:
        self.actor = actor
        self.replay_only, self._describes = ray.get(actor.features.remote())

    def get(self, key: str) -> dict[str, Any] | None:
        value: dict[str, Any] | None = ray.get(self.actor.get.remote(key))
        return value

    def describe_request(self, key: str, material: dict[str, Any]) -> None:
        if self._describes:
            ray.get(self.actor.describe_request.remote(key, material))

    def miss(self, key: str, stale: bool) -> Exception:
        error: Exception = ray.get(self.actor.miss.remote(key, stale))
        return error

    def set(self, key: str, value: dict[str, Any]) -> None:
        ray.get(self.actor.set.remote(key, value))

    def close(self) -> None:
        """Nothing to release here: the driver closes the actor's backend."""


def start_cache(backend: Any) -> Any:
    """What the workers need to reach ``backend`` (the driver's open cache, or ``None``): the
    backend itself when its storage is shared, else the handle of a new :class:`CacheActor` on
    this (the driver's) node. Raises ``TypeError`` for a backend that cannot be pickled."""
    if backend is None:
        return None
    try:
        frozen = pickle.dumps(backend)
    except Exception as exc:
        raise TypeError(
            f"cache: engine='ray' sends the judge cache to its workers, but a "
            f"{type(backend).__name__} cannot be pickled ({exc}); pass a SQLite file path or a "
            "backend that pickles to the way to reopen it (see openevals.evaluation.cache)"
        ) from None
    if shares_storage(backend):
        return backend
    node = ray.get_runtime_context().get_node_id()
    actor_class = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)(CacheActor)
    return actor_class.options(
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=False)
    ).remote(frozen)


def worker_cache(shared: Any) -> Any:
    """The cache object a worker uses, from what :func:`start_cache` returned."""
    if shared is None or shares_storage(shared):
        return shared
    return ActorCache(shared)


def stop_cache(shared: Any) -> None:
    """Close the actor's backend and end the actor (no-op for shared-storage backends)."""
    if shared is None or shares_storage(shared):
        return
    try:
        ray.get(shared.close.remote())
    finally:
        ray.kill(shared)
