"""Pairwise LLM-as-judge: which of two outputs is better for the same inputs.

``create_pairwise_llm_as_judge`` (and its async twin) build on :func:`openevals.llm.create_llm_as_judge`
with a structured verdict (``reasoning`` plus ``preference``: ``"A"``, ``"B"`` or ``"tie"``), so every
judge path of that factory works here too: ``model="provider:model"`` strings, LangChain chat
models and OpenAI clients.

Position bias: by default each comparison is judged twice, once with the outputs in the given order
and once swapped. When the two verdicts agree, that is the verdict; when they differ, the result is
a tie and ``metadata["position_consistent"]`` is ``False`` (``metadata["order_flip"]`` is ``True``
when the judge simply preferred whichever output came first, or second, both times).

The evaluator returns a LangSmith comparative result: ``{"key", "scores", "comment", "metadata"}``
where ``scores`` maps each output to 1.0 (preferred), 0.0 (not preferred) or 0.5 (tie). Inside
``langsmith.evaluate_comparative`` the scores are keyed by run id; standalone they are keyed by the
names of an ``outputs`` mapping, or by position (0 and 1) for a two-item list.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openevals._judge.declare import judge_factories
from openevals._judge.options import FactorySpec, ModelOptions
from openevals._judge.samples import majority
from openevals._judge.shell import Ask, JudgeCall, build_core, judge_evaluator
from openevals._judge.steps import Outcome
from openevals._repr import show
from openevals._structure import encode_json, expand_plain, fold
from openevals._text import check_text
from openevals.prompts.pairwise import (
    PAIRWISE_CORRECTNESS_PROMPT,
    PAIRWISE_HELPFULNESS_PROMPT,
    PAIRWISE_PREFERENCE_PROMPT,
)

__all__ = [
    "PAIRWISE_CORRECTNESS_PROMPT",
    "PAIRWISE_HELPFULNESS_PROMPT",
    "PAIRWISE_PREFERENCE_PROMPT",
    "create_async_pairwise_llm_as_judge",
    "create_pairwise_llm_as_judge",
]


@dataclass(frozen=True, kw_only=True)
class PairwiseOptions(ModelOptions):
    """The pairwise judge's options: the judge's, and how the two outputs are compared."""

    prompt: Any = PAIRWISE_PREFERENCE_PROMPT
    feedback_key: str = "pairwise_preference"
    criteria: str | None = None
    allow_ties: bool = True
    swap_positions: bool = True


_SCORE = {"A": (1.0, 0.0), "B": (0.0, 1.0), "tie": (0.5, 0.5)}
_SWAPPED = {"A": "B", "B": "A", "tie": "tie"}


def _verdict_schema(allow_ties: bool) -> dict[str, Any]:
    options = ["A", "B", "tie"] if allow_ties else ["A", "B"]
    return {
        "title": "pairwise_verdict",
        "description": "Which of two responses is better.",
        "type": "object",
        "properties": {
            "reasoning": {
                "type": "string",
                "description": "Step-by-step comparison of the two responses.",
            },
            "preference": {
                "type": "string",
                "enum": options,
                "description": "The better response: " + ", ".join(repr(o) for o in options),
            },
        },
        "required": ["reasoning", "preference"],
        "additionalProperties": False,
    }


_JSON_SCALARS = (str, int, float, bool, type(None))


def _plain_leaf(value: Any) -> Any:
    return value if isinstance(value, _JSON_SCALARS) else str(value)


def _plain_combine(tag: Any, _: Any, labels: Sequence[Any] | None, parts: list[Any]) -> Any:
    if tag == "map":
        assert labels is not None
        return dict(zip(labels, parts, strict=True))
    return parts


def _expand(value: Any) -> tuple[Any, Sequence[Any], Sequence[Any] | None] | None:
    tagged = expand_plain(value)
    return None if tagged is None or tagged[0] == "set" else tagged  # sets are shown by str()


def _as_text(value: Any, name: str) -> str:
    """``value`` as the judge sees it: a string as is, anything else as JSON (indented when it
    is not deeper than Python's recursion limit). ``name`` is the caller's parameter, named by
    every error: a value that contains itself, keys JSON cannot hold, unencodable text."""
    if value is None:
        return ""
    if isinstance(value, str):
        return check_text(value, name, sink="the judge")
    try:
        try:
            text = json.dumps(value, ensure_ascii=False, indent=2, default=str)
        except (RecursionError, ValueError):
            plain = fold(value, name, _expand, _plain_leaf, _plain_combine)  # names a cycle
            text = encode_json(plain, name, sort_keys=False, ensure_ascii=False)
    except TypeError as exc:
        raise TypeError(
            f"`{name}` cannot be shown to the judge as JSON ({exc}); use str keys (or convert "
            "the value to text first)"
        ) from None
    return check_text(text, name, of="its JSON text", sink="the judge")


@dataclass(frozen=True)
class _Pair:
    """The two outputs of one call and the keys their scores are reported under."""

    keys: tuple[Any, Any]
    texts: tuple[str, str]


def _pair(outputs: Any, runs: Sequence[Any] | None) -> _Pair:
    if isinstance(outputs, Mapping):
        if len(outputs) != 2:
            raise ValueError(
                f"a pairwise judge compares exactly two outputs; `outputs` has {len(outputs)} "
                f"entries ({show(list(outputs))}). Use evaluate() with several systems to compare more."
            )
        (ka, va), (kb, vb) = outputs.items()
        keys: tuple[Any, Any] = (ka, kb)
        values, names = (va, vb), (f"outputs[{show(ka)}]", f"outputs[{show(kb)}]")
    elif isinstance(outputs, Sequence) and not isinstance(outputs, (str, bytes)):
        if len(outputs) != 2:
            raise ValueError(
                f"a pairwise judge compares exactly two outputs; `outputs` has {len(outputs)} "
                "items. Use evaluate() with several systems to compare more."
            )
        keys, values = (0, 1), (outputs[0], outputs[1])
        names = ("outputs[0]", "outputs[1]")
    else:
        raise TypeError(
            "`outputs` must be a list of two outputs, or a dict of two system names -> output; "
            f"got {type(outputs).__name__}"
        )
    if runs is not None:
        keys = _run_ids(runs)
    return _Pair(keys=keys, texts=(_as_text(values[0], names[0]), _as_text(values[1], names[1])))


def _run_ids(runs: Any) -> tuple[str, str]:
    """The ids of the two runs LangSmith's ``evaluate_comparative`` passes as ``runs``."""
    if isinstance(runs, (str, bytes)) or not isinstance(runs, Sequence):
        raise TypeError(
            "`runs` must be a list of the two runs being compared (objects with an `id`, as "
            f"langsmith's evaluate_comparative passes them); got {type(runs).__name__} "
            f"{show(runs)}"
        )
    if len(runs) != 2:
        raise ValueError(
            f"a pairwise judge compares exactly two runs; `runs` has {len(runs)}. Pass the two "
            "runs being compared"
        )
    ids = []
    for i, run in enumerate(runs):
        run_id = run.get("id") if isinstance(run, Mapping) else getattr(run, "id", None)
        if run_id is None:
            raise TypeError(
                f"`runs[{i}]` must be a run with an `id` (a langsmith Run, or a dict with 'id'); "
                f"got {type(run).__name__} {show(run)}"
            )
        ids.append(str(run_id))
    return ids[0], ids[1]


def _calls(inputs: Any, reference_outputs: Any, pair: _Pair, criteria: str, swap: bool) -> Ask:
    """The judge calls to make: the given order, then (by default) the swapped one."""
    inputs = _as_text(inputs, "inputs")
    reference_outputs = _as_text(reference_outputs, "reference_outputs")
    first, second = pair.texts
    orders = [(first, second), (second, first)] if swap else [(first, second)]
    return Ask(
        tuple(
            JudgeCall(
                inputs=inputs,
                reference_outputs=reference_outputs,
                extra={"criteria": criteria, "output_a": a, "output_b": b},
            )
            for a, b in orders
        )
    )


def _vote(outcome: Outcome) -> dict[str, Any]:
    """One order's answer: the judge's, or with ``samples`` > 1 the majority preference (a
    tied vote is a tie), with the first agreeing sample's reasoning and every preference."""
    answers = outcome.values or [outcome.value]
    if len(answers) == 1:
        return dict(answers[0])
    preferences = [str(a["preference"]) for a in answers]
    leader, tied = majority(preferences, None)
    winner = "tie" if tied else leader
    agreeing = [a for a in answers if a["preference"] == winner] or answers
    return {
        "preference": winner,
        "reasoning": agreeing[0].get("reasoning", ""),
        "samples": preferences,
    }


def _result(feedback_key: str, pair: _Pair, answers: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    verdicts = [str(answers[0]["preference"])]
    if len(answers) > 1:
        verdicts.append(_SWAPPED[str(answers[1]["preference"])])  # back to the given order
    consistent = len(set(verdicts)) == 1
    final = verdicts[0] if consistent else "tie"
    score_a, score_b = _SCORE[final]
    reasoning = [str(a.get("reasoning", "")) for a in answers]
    comment = (
        reasoning[0]
        if len(reasoning) == 1
        else f"Given order: {reasoning[0]}\n\nSwapped order: {reasoning[1]}"
    )
    metadata: dict[str, Any] = {
        "preferred": None if final == "tie" else pair.keys[0 if final == "A" else 1],
        "verdicts": verdicts,
        "position_consistent": consistent,
        "order_flip": set(verdicts) == {"A", "B"},
    }
    if "samples" in answers[0]:
        # Each order's sample preferences, in the order it was shown to the judge.
        metadata["samples"] = [list(a["samples"]) for a in answers]
    return {
        "key": feedback_key,
        "scores": {pair.keys[0]: score_a, pair.keys[1]: score_b},
        "comment": comment,
        "metadata": metadata,
    }


def _comparative(
    *,
    inputs: Any = None,
    outputs: Any = None,
    reference_outputs: Any = None,
    runs: Sequence[Any] | None = None,
    **kwargs: Any,
) -> Any:
    """The signature LangSmith reads (it passes ``runs`` only to evaluators naming it)."""


def _pairwise(spec: FactorySpec, options: PairwiseOptions) -> Any:
    """The evaluator both public factories return."""
    feedback_key, criteria = options.feedback_key, options.criteria
    swap, allow_ties = options.swap_positions, options.allow_ties
    if not isinstance(feedback_key, str) or not feedback_key:
        raise ValueError(f"`feedback_key` must be a non-empty str; got {show(feedback_key)}")
    if criteria is not None and not isinstance(criteria, str):
        raise TypeError(f"`criteria` must be a str or None; got {type(criteria).__name__}")
    if not isinstance(swap, bool):
        raise TypeError(f"`swap_positions` must be a bool; got {show(swap)}")
    if not isinstance(allow_ties, bool):
        raise TypeError(f"`allow_ties` must be a bool; got {show(allow_ties)}")
    core = build_core(
        spec, options, run_name="pairwise_llm_as_judge", output_schema=_verdict_schema(allow_ties)
    )

    def flow(
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        runs: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> Generator[Any, Any, dict[str, Any]]:
        """Both orders asked, then one comparative result."""
        pair = _pair(outputs, runs)
        outcomes = yield _calls(inputs, reference_outputs, pair, criteria or "", swap)
        return _result(feedback_key, pair, [_vote(outcome) for outcome in outcomes])

    return judge_evaluator(
        core,
        is_async=spec.is_async,
        flow=flow,
        feedback_keys=(feedback_key,),
        raw=True,
        name="pairwise_evaluator",
        signature=_comparative,
    )


def _as_is(evaluator: Any) -> Any:
    return evaluator


create_pairwise_llm_as_judge, create_async_pairwise_llm_as_judge = judge_factories(
    "create_pairwise_llm_as_judge",
    PairwiseOptions,
    _pairwise,
    (_as_is, _as_is),
    order=(
        "prompt feedback_key judge model system criteria allow_ties swap_positions "
        "max_retries samples"
    ),
    doc="""Create an evaluator that asks an LLM which of two outputs is better.

Args:
    prompt: the comparison prompt, with ``{inputs}``, ``{output_a}``, ``{output_b}`` and
        optionally ``{reference_outputs}`` and ``{criteria}`` (default: overall preference;
        see also ``PAIRWISE_HELPFULNESS_PROMPT`` and ``PAIRWISE_CORRECTNESS_PROMPT``). Any
        prompt kind that ``create_llm_as_judge`` takes works.
    feedback_key: the key of the returned result.
    judge, model, system, max_retries: as for ``create_llm_as_judge``.
    criteria: extra criteria to weigh, inserted into the prompt's ``{criteria}`` block.
    allow_ties: offer the judge a "tie" verdict.
    swap_positions: judge each comparison in both orders (recommended); disagreeing verdicts
        become a tie, flagged in metadata.
    samples: ask the judge this many times per order; the majority preference is that
        order's verdict (a tied vote is a tie), and ``metadata["samples"]`` lists the
        preferences of each order.

Call it with ``inputs``, ``outputs`` (two outputs: a list, or a dict of system name ->
output), optional ``reference_outputs``; inside ``langsmith.evaluate_comparative`` it also
receives ``runs`` and keys its scores by run id.
""",
)
