"""`to_pandas(with_rows=True)` and `Comparison.to_pandas()` (issue 40, item 5)."""

from __future__ import annotations

import pytest

from openevals import evaluate
from openevals.comparison import compare

pd = pytest.importorskip("pandas")

ROWS = [
    {"id": f"r{n}", "inputs": {"q": n}, "outputs": "yes", "reference_outputs": "yes" if n else "no"}
    for n in range(6)
]


def test_to_pandas_with_rows_adds_inputs_outputs_and_reference() -> None:
    result = evaluate(ROWS, ["exact_match"], progress=False)
    long = result.to_pandas(with_rows=True)
    assert list(long.columns[:6]) == [
        "id",
        "index",
        "inputs",
        "outputs",
        "reference_outputs",
        "extra",
    ]
    assert long.loc[0, "inputs"] == {"q": 0} and long.loc[0, "reference_outputs"] == "no"
    wide = result.to_pandas(wide=True, with_rows=True)
    assert list(wide["outputs"]) == ["yes"] * 6 and "exact_match" in wide.columns
    assert "inputs" not in result.to_pandas().columns
    with pytest.raises(TypeError, match="with_rows must be True or False"):
        result.to_pandas(with_rows="yes")


def test_comparison_to_pandas_has_one_row_per_key_and_group() -> None:
    base = evaluate(ROWS, ["exact_match"], progress=False)
    cand = evaluate([{**r, "outputs": "no"} for r in ROWS], ["exact_match"], progress=False)
    table = compare(base, cand).to_pandas()
    assert list(table["key"]) == ["exact_match"] and table.loc[0, "group"] is None
    assert table.loc[0, "baseline_mean"] == pytest.approx(5 / 6)
    assert {"verdict", "p_adjusted", "ci_low", "ci_high"} <= set(table.columns)
