"""``evaluate(..., trials=)``: run the target several times per row, and ask judges several times
per output.

:class:`Trials` (or an int, the number of target trials) turns a run into a larger one before it
starts, so every engine, the ``output=`` file and resume work unchanged:

* each data row becomes ``trials`` rows with ids ``<row id>@trial<t>`` and the extra field
  ``trial = {"row": <row id>, "index": t}`` (the target runs on each);
* each evaluator that is not pure runs ``judge_repeats`` times per row, named ``<name>`` and
  ``<name>@repeat<j>``;
* every judge call of trial ``t``, repeat ``j`` other than (0, 0) looks the judge cache up under
  its own key (the request's key salted with ``t`` and ``j``), so repeats and trials are real
  model calls, never cache hits of each other; trial 0, repeat 0 keeps the plain key, so a cache
  filled by an ordinary run still serves it.

The statistics of such a run (pass@k, pass^k, flip rates, the split of the variance between the
app and the judge) are :func:`openevals.trust.trials.trial_stats`.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from openevals._contract import EvaluatorInfo, attach_info, is_async_callable
from openevals._judge.cache import active_cache
from openevals._repr import show
from openevals.evaluation.cache import cassette_extension
from openevals.trust.trials import REPEAT, TRIAL

__all__ = ["Trials", "as_trials", "expand"]


@dataclass(frozen=True)
class Trials:
    """``trials`` target runs per row and ``judge_repeats`` judge calls per output."""

    trials: int = 1
    judge_repeats: int = 1

    def __post_init__(self) -> None:
        for name in ("trials", "judge_repeats"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"`{name}` must be an int >= 1; got {show(value)}")

    @property
    def active(self) -> bool:
        return self.trials > 1 or self.judge_repeats > 1


def as_trials(value: Any) -> Trials | None:
    """``evaluate``'s ``trials=``: ``None``, an int (target trials) or :class:`Trials`."""
    if value is None or isinstance(value, Trials):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return Trials(trials=value)
    raise TypeError(
        "`trials` must be an int (target runs per row) or Trials(trials=k, judge_repeats=m); got "
        f"{show(value)}"
    )


class _SaltedCache:
    """The run's judge cache seen through keys salted with a trial and a repeat."""

    def __init__(self, inner: Any, salt: str) -> None:
        self._inner = inner
        self._salt = salt

    def _key(self, key: str) -> str:
        return f"{key}{self._salt}"

    def get(self, key: str) -> Any:
        return self._inner.get(self._key(key))

    def set(self, key: str, value: Any) -> None:
        self._inner.set(self._key(key), value)

    def describe_request(self, key: str, material: Any) -> None:
        describe = getattr(self._inner, "describe_request", None)
        if describe is not None:
            describe(self._key(key), material)

    def __getattr__(self, name: str) -> Any:  # replay_only, miss: the inner cache's own
        return cassette_extension(self, "_inner", name)


def _salt(trial: Any, repeat: int) -> str:
    index = trial.get("index", 0) if isinstance(trial, dict) else 0
    return "" if (index, repeat) == (0, 0) else f"|trial{index}|repeat{repeat}"


def _repeated(fn: Any, info: EvaluatorInfo | None, repeat: int) -> Any:
    """``fn`` run under the salted cache of its row's trial and of ``repeat``."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # no signature to read: it takes every row field
        signature = inspect.Signature([inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)])
    params = list(signature.parameters.values())
    takes_trial = "trial" in signature.parameters
    if not takes_trial:
        extra = inspect.Parameter("trial", inspect.Parameter.KEYWORD_ONLY, default=None)
        last = params[-1:] if params and params[-1].kind is inspect.Parameter.VAR_KEYWORD else []
        params = [p for p in params if p not in last] + [extra] + last

    @contextlib.contextmanager
    def salted(kwargs: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """The call's arguments (without ``trial`` unless ``fn`` takes it), with the run's judge
        cache seen through the keys of the row's trial and of ``repeat`` inside."""
        trial = kwargs.get("trial") if takes_trial else kwargs.pop("trial", None)
        salt = _salt(trial, repeat)
        inner = active_cache.get()
        if not salt or inner is None:
            yield kwargs
            return
        token = active_cache.set(_SaltedCache(inner, salt))
        try:
            yield kwargs
        finally:
            active_cache.reset(token)

    if is_async_callable(fn):

        async def arepeat(**kwargs: Any) -> Any:
            with salted(kwargs) as arguments:
                return await fn(**arguments)

        wrapper: Any = arepeat
    else:

        def repeat_call(**kwargs: Any) -> Any:
            with salted(kwargs) as arguments:
                return fn(**arguments)

        wrapper = repeat_call
    functools.update_wrapper(wrapper, fn, assigned=("__name__", "__qualname__", "__doc__"))
    wrapper.__signature__ = signature.replace(parameters=params)
    if info is not None:  # no async twin: it would bypass the salted cache
        attach_info(wrapper, replace(info, twin=None))
    return wrapper


def _rows(data: Any, trials: int) -> Iterator[dict[str, Any]]:
    from openevals.data.rows import iter_rows

    for row in iter_rows(data):
        for t in range(trials):
            fields = dict(row.fields)
            fields["trial"] = {"row": row.id, "index": t}
            yield {**fields, "id": f"{row.id}{TRIAL}{t}"}


def expand(data: Any, evaluators: Any, trials: Trials, *, model: str | None) -> tuple[Any, Any]:
    """``(data, evaluators)`` of the expanded run (see the module docstring)."""
    from openevals.evaluation.evaluators import prepare_evaluators
    from openevals.evaluation.spec import EvaluatorSpec

    specs = []
    for item in prepare_evaluators(evaluators, model=model):
        fields = dict(item.fields) or None
        if item.inline or (item.info is not None and item.info.pure):
            specs.append(EvaluatorSpec(item.fn, name=item.name, fields=fields, inline=item.inline))
            continue
        for j in range(trials.judge_repeats):
            name = item.name if j == 0 else f"{item.name}{REPEAT}{j}"
            specs.append(EvaluatorSpec(_repeated(item.fn, item.info, j), name=name, fields=fields))
    return _rows(data, trials.trials), specs
