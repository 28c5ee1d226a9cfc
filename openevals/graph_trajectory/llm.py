"""LLM-as-judge over a LangGraph thread's graph trajectory (agentevals'
``create_graph_trajectory_llm_as_judge``), on the shared judge core.

The thread (per turn: its input, the graph steps it ran and its result) and an optional reference
thread are rendered as text and fill the prompt's ``{thread}`` and ``{reference_outputs}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from openevals._judge.declare import EVALUATORS, judge_factories
from openevals._judge.options import TRAJECTORY_ORDER, FactorySpec, JudgeOptions
from openevals._judge.shell import build_core, judge_evaluator
from openevals._messages import to_json_text
from openevals._repr import show
from openevals.prompts.trajectory import GRAPH_TRAJECTORY_ACCURACY_PROMPT

__all__ = [
    "GRAPH_TRAJECTORY_ACCURACY_PROMPT",
    "create_async_graph_trajectory_llm_as_judge",
    "create_graph_trajectory_llm_as_judge",
    "format_graph_thread",
]


def _show(value: Any, name: str) -> str:
    """``value`` as compact JSON (other objects as their ``str``); a value that contains itself
    as its ``repr``. Any depth: a deeper value than ``json`` can walk goes through the iterative
    encoder, which raises ``TypeError`` naming ``name`` for what JSON cannot hold."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except RecursionError:
        return to_json_text(value, name=name)
    except (TypeError, ValueError):
        return repr(value)


def _trajectory(value: Any, name: str) -> tuple[list[Any], list[Any]]:
    if not isinstance(value, Mapping) or not isinstance(value.get("steps"), Sequence):
        raise TypeError(
            f"`{name}` must be a graph trajectory, a dict with 'results' and 'steps' lists (e.g. "
            f"extract_langgraph_trajectory_from_thread(...)['outputs']); got "
            f"{type(value).__name__}"
        )
    steps = list(value["steps"])
    results = value.get("results")
    results = list(results) if isinstance(results, Sequence) and results else [None] * len(steps)
    if len(results) != len(steps):
        raise ValueError(
            f"`{name}` has {len(results)} results but {len(steps)} turns of steps; they must "
            "have the same length"
        )
    return results, steps


def _turn_inputs(inputs: Any, turns: int, name: str) -> list[Any]:
    if isinstance(inputs, Mapping):
        if "inputs" not in inputs:
            raise ValueError(
                f"`{name}` must be a list of turn inputs or a dict with an 'inputs' key (the "
                f"extracted thread); got a dict with keys {show(sorted(inputs))}"
            )
        inputs = inputs["inputs"]
    if inputs is None:
        return [None] * turns
    if isinstance(inputs, (str, bytes)) or not isinstance(inputs, Sequence):
        raise TypeError(f"`{name}` must be a list of turn inputs; got {type(inputs).__name__}")
    if len(inputs) != turns:
        raise ValueError(
            f"`{name}` has {len(inputs)} turn inputs but the trajectory has {turns} turns; they "
            "must have the same length"
        )
    return list(inputs)


def format_graph_thread(inputs: Any, trajectory: Any, *, name: str = "outputs") -> str:
    """A graph trajectory as the judge reads it: one ``<turn>`` block per turn with its input (when
    there is one), its steps and its result. Raises TypeError/ValueError for a bad shape."""
    results, steps = _trajectory(trajectory, name)
    input_name = "inputs" if name == "outputs" else name
    turn_inputs = _turn_inputs(inputs, len(steps), input_name)
    blocks = []
    for i, (given, result, turn) in enumerate(zip(turn_inputs, results, steps, strict=True), 1):
        lines = [f"<turn {i}>"]
        if given:
            lines.append(f"<input>\n{_show(given, f'{input_name}[{i - 1}]')}\n</input>")
        shown_steps = _show(list(turn), f"{name}['steps'][{i - 1}]")
        shown_result = _show(result, f"{name}['results'][{i - 1}]")
        lines.append(f"<steps>\n{shown_steps}\n</steps>")
        lines.append(f"<result>\n{shown_result}\n</result>")
        lines.append(f"</turn {i}>")
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def _render_thread(call: dict[str, Any]) -> dict[str, Any]:
    """Fill ``thread`` and ``reference_outputs`` from the call's trajectories."""
    if call.get("outputs") is None:
        raise ValueError(
            "the graph trajectory judge needs `outputs` (the graph trajectory to grade); got None"
        )
    thread = format_graph_thread(call.get("inputs"), call["outputs"])
    reference = call.get("reference_outputs")
    rendered = ""
    if reference:
        ref_inputs = reference.get("inputs") if isinstance(reference, Mapping) else None
        shown = format_graph_thread(ref_inputs, reference, name="reference_outputs")
        rendered = REFERENCE_BLOCK.format(reference=shown)
    return {**call, "thread": thread, "reference_outputs": rendered}


# ``{reference_outputs}`` is the whole labelled block (lead-in and tags), as agentevals renders
# it, so a prompt written for agentevals, with ``{reference_outputs}`` on a line of its own, gets
# a reference the judge can tell apart from the thread. Empty without a reference.
REFERENCE_BLOCK = (
    "\nA reference thread follows; treat it as an example of a good path when grading:\n"
    "<reference_thread>\n{reference}\n</reference_thread>\n"
)


def _graph_trajectory_judge(spec: FactorySpec, options: JudgeOptions) -> object:
    """The evaluator both public factories return."""
    core = build_core(spec, options)
    return judge_evaluator(core, is_async=spec.is_async, prepare=_render_thread)


create_graph_trajectory_llm_as_judge, create_async_graph_trajectory_llm_as_judge = judge_factories(
    "create_graph_trajectory_llm_as_judge",
    JudgeOptions,
    _graph_trajectory_judge,
    EVALUATORS,
    order=TRAJECTORY_ORDER,
    prompt=GRAPH_TRAJECTORY_ACCURACY_PROMPT,
    feedback_key="graph_trajectory_accuracy",
    doc="""Grade a graph trajectory (``outputs``, with the turns' ``inputs``: a list, or the extracted
thread dict with an ``inputs`` key), optionally against a reference graph trajectory
(``reference_outputs``, whose own ``inputs`` are read from it). Key
``graph_trajectory_accuracy``; the prompt gets ``{thread}`` and ``{reference_outputs}`` (empty
without a reference). Takes the options of :func:`openevals.llm.create_llm_as_judge`. Raises
ValueError/TypeError when the inputs, results and steps do not line up.
""",
)
