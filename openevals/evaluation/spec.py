"""How the batch runner is told about one evaluator: :class:`EvaluatorSpec`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from openevals._repr import show

__all__ = ["EvaluatorSpec"]


@dataclass(frozen=True)
class EvaluatorSpec:
    """An evaluator plus the options the runner needs.

    Args:
        evaluator: any evaluator callable (sync or async) following the openevals contract.
        name: the evaluator's name in results and in the ``output=`` file (it identifies finished
            work on resume, so keep it stable). Defaults to the function's name.
        fields: which row field feeds which evaluator argument, as dotted paths; e.g.
            ``{"outputs": "outputs.answer", "reference_outputs": "reference_outputs.answer"}``
            passes the ``answer`` entry of each dict. Unmapped arguments get the field of the same
            name.
        inline: run a sync evaluator on the event-loop thread instead of the thread pool. Only for
            cheap, pure functions (``exact_match``, Levenshtein, retrieval ranking metrics, which
            the runner recognises itself); ``None`` lets the runner decide.
        fail_fast: stop the run when the evaluator's first 5 evaluations all fail with one same
            error (a configuration mistake such as a missing API key or column; see
            :class:`~openevals.evaluation.failfast.EvaluatorFailing`). ``False`` records every
            failure as an error row and goes on (for data where failing rows are expected).
    """

    evaluator: Callable[..., Any]
    name: str | None = None
    fields: Mapping[str, str] | None = None
    inline: bool | None = None
    fail_fast: bool = True

    def __post_init__(self) -> None:
        if not callable(self.evaluator):
            raise TypeError(
                f"EvaluatorSpec.evaluator must be callable; got {type(self.evaluator).__name__}"
            )
        if self.name is not None and (not isinstance(self.name, str) or not self.name):
            raise ValueError(
                f"EvaluatorSpec.name must be a non-empty string; got {show(self.name)}"
            )
        if self.fields is not None:
            if not isinstance(self.fields, Mapping):
                raise TypeError(
                    "EvaluatorSpec.fields must map argument names to dotted row paths; got "
                    f"{type(self.fields).__name__}"
                )
            for arg, path in self.fields.items():
                if not isinstance(arg, str) or not isinstance(path, str) or not path:
                    raise TypeError(
                        "EvaluatorSpec.fields must map argument names (str) to dotted row paths "
                        f"(non-empty str); got {show(arg)}: {show(path)}"
                    )
        if not isinstance(self.fail_fast, bool):
            raise TypeError(f"EvaluatorSpec.fail_fast must be a bool; got {show(self.fail_fast)}")
        if self.inline is not None and not isinstance(self.inline, bool):
            raise TypeError(f"EvaluatorSpec.inline must be a bool or None; got {show(self.inline)}")
