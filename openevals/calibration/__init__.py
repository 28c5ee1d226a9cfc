"""Judge calibration against human labels: agreement with bootstrap intervals, the disagreements,
few-shot examples picked from them, and an honest cross-validated before/after.

    from openevals.calibration import calibrate

    report = calibrate("labelled.jsonl", judge, label="human_label")
    print(report)

Names are resolved lazily (PEP 562): importing ``openevals.calibration`` loads no numpy.
"""

# ruff: noqa: F403 - the TYPE_CHECKING star imports only tell type checkers what is re-exported

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_RUN = "openevals.calibration.run"
_CV = "openevals.calibration.crossval"
_REPORT = "openevals.calibration.report"
_AGREEMENT = "openevals.calibration.agreement"

_EXPORTS: dict[str, str] = {
    "calibrate": _RUN,
    "acalibrate": _RUN,
    "cross_validate": _CV,
    "across_validate": _CV,
    "CrossValidation": _CV,
    "Fold": _CV,
    "suggest_few_shot_examples": "openevals.calibration.fewshot",
    "CalibrationReport": _REPORT,
    "JudgedRow": _REPORT,
    "FailedRow": _REPORT,
    "categorical_agreement": _AGREEMENT,
    "continuous_agreement": _AGREEMENT,
    "CategoricalAgreement": _AGREEMENT,
    "ContinuousAgreement": _AGREEMENT,
    "Estimate": _AGREEMENT,
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from openevals.calibration.agreement import *
    from openevals.calibration.crossval import *
    from openevals.calibration.fewshot import *
    from openevals.calibration.report import *
    from openevals.calibration.run import *


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
