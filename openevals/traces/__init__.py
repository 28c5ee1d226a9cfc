"""Agent traces as evaluation data: OpenTelemetry spans (GenAI conventions, OpenInference) read
from OTLP files or from the SDK in process, as rows every evaluator takes.

Names resolve lazily (see :func:`openevals._lazy_exports`): nothing of OpenTelemetry loads until
an SDK object is converted or a file is written. Online scoring of live traces is
:class:`openevals.evaluation.OnlineEvaluator` (the run layer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

if TYPE_CHECKING:
    # The exports: one ``name as name`` per exported name (read at run time too).
    # isort: off
    from openevals.traces.model import (
        Event as Event,
        Span as Span,
        Trace as Trace,
        TraceError as TraceError,
    )
    from openevals.traces.rows import (
        conversation as conversation,
        trace_row as trace_row,
    )
    from openevals.traces.sdk import (
        OtlpFileExporter as OtlpFileExporter,
        spans_from_sdk as spans_from_sdk,
    )
    from openevals.traces.source import (
        TraceReader as TraceReader,
        read_traces as read_traces,
    )
    # isort: on

__all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())
