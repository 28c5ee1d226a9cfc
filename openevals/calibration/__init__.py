"""Judge calibration against human labels (agreement figures with bootstrap intervals).

Names resolve lazily (see :func:`openevals._lazy_exports`): numpy loads when a figure is computed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

_AGREEMENT = "openevals.calibration.agreement"

_EXPORTS: dict[str, str] = {
    "categorical_agreement": _AGREEMENT,
    "continuous_agreement": _AGREEMENT,
    "CategoricalAgreement": _AGREEMENT,
    "ContinuousAgreement": _AGREEMENT,
    "Estimate": _AGREEMENT,
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    # Explicit re-exports for type checkers; one line per name of the map.
    # isort: off
    from openevals.calibration.agreement import (
        CategoricalAgreement as CategoricalAgreement,
        ContinuousAgreement as ContinuousAgreement,
        Estimate as Estimate,
        categorical_agreement as categorical_agreement,
        continuous_agreement as continuous_agreement,
    )
    # isort: on

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, globals())
