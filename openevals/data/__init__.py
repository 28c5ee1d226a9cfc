"""Reading and writing rows: files (JSONL, JSON, CSV, TSV, Parquet), DataFrames and Arrow tables,
Hugging Face and LangSmith datasets in; pandas, polars and Parquet tables of results out.

    from openevals.data import load_rows

    rows = load_rows("data.jsonl")

Names resolve lazily (see :func:`openevals._lazy_exports`): importing ``openevals.data`` loads no
pandas, polars or pyarrow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

if TYPE_CHECKING:
    # The exports: one ``name as name`` per exported name (read at run time too).
    # isort: off
    from openevals.data.langsmith_source import (
        LangSmithDataset as LangSmithDataset,
        langsmith_dataset as langsmith_dataset,
    )
    from openevals.data.rows import (
        iter_rows as iter_rows,
        load_rows as load_rows,
    )
    # isort: on

__all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())
