"""Judge calibration against human labels: agreement with bootstrap intervals, the disagreements,
few-shot examples picked from them, and an honest cross-validated before/after.

    from openevals.calibration import calibrate

    report = calibrate("labelled.jsonl", judge, label="human_label")
    print(report)

Names resolve lazily (see :func:`openevals._lazy_exports`): importing ``openevals.calibration``
loads no numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

if TYPE_CHECKING:
    # The exports: one ``name as name`` per exported name (read at run time too).
    # isort: off
    from openevals.calibration.agreement import (
        CategoricalAgreement as CategoricalAgreement,
        ContinuousAgreement as ContinuousAgreement,
        Estimate as Estimate,
        categorical_agreement as categorical_agreement,
        continuous_agreement as continuous_agreement,
    )
    from openevals.calibration.crossval import (
        CrossValidation as CrossValidation,
        Fold as Fold,
        across_validate as across_validate,
        cross_validate as cross_validate,
    )
    from openevals.calibration.fewshot import (
        suggest_few_shot_examples as suggest_few_shot_examples,
    )
    from openevals.calibration.report import (
        CalibrationReport as CalibrationReport,
        FailedRow as FailedRow,
        JudgeFailedError as JudgeFailedError,
        JudgeScoresError as JudgeScoresError,
        JudgedRow as JudgedRow,
    )
    from openevals.calibration.labels_store import (
        labeller_agreement as labeller_agreement,
        stored_labels as stored_labels,
    )
    from openevals.calibration.run import (
        acalibrate as acalibrate,
        calibrate as calibrate,
    )
    # isort: on

__all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())
