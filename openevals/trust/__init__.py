"""Numbers users can trust: judge-corrected estimates (prediction-powered inference) and the
agreement of a judge panel (Krippendorff's alpha, the effective number of judges).

    result = evaluate(rows, [judge])
    print(result.corrected(calibrate(labelled, judge)).corrections["correctness"])

Names resolve lazily (see :func:`openevals._lazy_exports`): importing ``openevals.trust`` loads
no numpy. The statistics modules (:mod:`~openevals.trust.ppi`) import nothing of the runner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

if TYPE_CHECKING:
    # The exports: one ``name as name`` per exported name (read at run time too).
    # isort: off
    from openevals.panel import (
        create_async_judge_panel as create_async_judge_panel,
        create_judge_panel as create_judge_panel,
        panel_agreement_of as panel_agreement_of,
    )
    from openevals.trust.corrected import (
        CorrectedMean as CorrectedMean,
        correct as correct,
    )
    from openevals.trust.labels import (
        CalibrationData as CalibrationData,
        load_calibration as load_calibration,
    )
    from openevals.trust.ppi import (
        PPIEstimate as PPIEstimate,
        ppi_difference as ppi_difference,
        ppi_mean as ppi_mean,
    )
    from openevals.trust.reliability import (
        PanelAgreement as PanelAgreement,
        effective_judges as effective_judges,
        krippendorff_alpha as krippendorff_alpha,
        panel_agreement as panel_agreement,
    )
    from openevals.trust.sequential import (
        SequentialTest as SequentialTest,
    )
    from openevals.trust.trials import (
        TrialStats as TrialStats,
        pass_at as pass_at,
        pass_hat as pass_hat,
        variance_split as variance_split,
    )
    # isort: on

__all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())
