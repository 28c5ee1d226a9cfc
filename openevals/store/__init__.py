"""The run store: every recorded run (metadata, aggregates, rows) and the labels people give
its rows, in a SQLite file (``.openevals/runs.db`` or ``$OPENEVALS_STORE``) or PostgreSQL.

    from openevals import evaluate, load_run
    from openevals.store import RunStore

    result = evaluate(rows, evaluators, store=True)          # recorded in .openevals/runs.db
    again = load_run("latest", store=True)                   # reopened without data or evaluators
    with RunStore() as store:
        print([run.id for run in store.runs()])

The command line records by default (``openevals run``, ``calibrate``, ``compare``;
``--no-store`` turns it off); ``openevals runs`` lists and compares stored runs and
``openevals view`` shows them in a browser.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

if TYPE_CHECKING:
    # The exports: one ``name as name`` per exported name (read at run time too).
    # isort: off
    from openevals.store._db import (
        DEFAULT_PATH as DEFAULT_PATH,
        ENV_VAR as ENV_VAR,
    )
    from openevals.store.runs import (
        Label as Label,
        RunStore as RunStore,
        StoredRun as StoredRun,
        open_store as open_store,
    )
    # isort: on

__all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())
