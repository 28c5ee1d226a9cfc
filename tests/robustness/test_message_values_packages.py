"""Deep, cyclic and huge option values for the packages ``test_message_values`` leaves out.

Issue 35, item 8: one case per package (code, E2B, trajectory, string, simulators, pairwise, the
RAG judges, the graph-trajectory judge). Each bad value must give the package's own
``TypeError``/``ValueError`` naming the parameter, never ``RecursionError``, stay under 2,000
characters, come back promptly, and leave the value as it was.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.robustness.test_message_values import (
    ALL,
    MODEL,
    NOT_STR,
    Case,
)
from tests.robustness.test_message_values import (
    test_a_bad_value_gives_a_short_error_naming_the_parameter as check_bad_value,
)

pytestmark = pytest.mark.usefixtures("tracing_off")


def mypy(**options: Any) -> Any:
    from openevals.code import create_mypy_evaluator

    return create_mypy_evaluator(**options)


def apyright(**options: Any) -> Any:
    from openevals.code import create_async_pyright_evaluator

    return create_async_pyright_evaluator(**options)


def e2b(**options: Any) -> Any:
    from openevals.code.e2b.execution import create_e2b_execution_evaluator
    from openevals.testing import FakeSandbox

    with FakeSandbox() as box:
        return create_e2b_execution_evaluator(sandbox=box, **options)


def trajectory(**options: Any) -> Any:
    from openevals.trajectory import create_trajectory_match_evaluator

    return create_trajectory_match_evaluator(**options)


def embedding(**options: Any) -> Any:
    from openevals.string import create_embedding_similarity_evaluator

    return create_embedding_similarity_evaluator(**options)


def simulation(**options: Any) -> Any:
    from openevals.simulators import run_multiturn_simulation

    def app(*, inputs: Any, **_: Any) -> Any:
        return {"role": "assistant", "content": "ok"}

    return run_multiturn_simulation(app=app, user=["hi"], **options)


def simulated_user(**options: Any) -> Any:
    from openevals.simulators import create_llm_simulated_user

    return create_llm_simulated_user(model=MODEL, **options)


def pairwise(**options: Any) -> Any:
    from openevals.llm import create_pairwise_llm_as_judge

    return create_pairwise_llm_as_judge(prompt="{outputs_a} {outputs_b}", model=MODEL, **options)


def faithfulness(**options: Any) -> Any:
    from openevals.rag import create_faithfulness_evaluator

    return create_faithfulness_evaluator(model=MODEL, **options)


def graph_judge(**options: Any) -> Any:
    from openevals.graph_trajectory.llm import create_graph_trajectory_llm_as_judge

    return create_graph_trajectory_llm_as_judge(model=MODEL, **options)


CASES = [
    Case(
        "code-mypy_cli_args",
        lambda v: mypy(mypy_cli_args=[v]),
        TypeError,
        "`mypy_cli_args`",
        NOT_STR,
    ),
    Case("code-timeout", lambda v: mypy(timeout=v), TypeError, "`timeout`"),
    Case(
        "code-strategy",
        lambda v: apyright(code_extraction_strategy=v),
        TypeError,
        "`code_extraction_strategy`",
        NOT_STR,
    ),
    Case("e2b-timeout", lambda v: e2b(timeout=v), ValueError, "`timeout`"),
    Case(
        "e2b-environment_variables",
        lambda v: e2b(environment_variables={"A": v}),
        TypeError,
        "`environment_variables`",
        NOT_STR,
    ),
    Case(
        "trajectory-mode",
        lambda v: trajectory(trajectory_match_mode=v),
        ValueError,
        "trajectory_match_mode",
    ),
    Case(
        "trajectory-overrides",
        lambda v: trajectory(tool_args_match_overrides={"tool": v}),
        ValueError,
        "tool_args_match_overrides",
    ),
    Case("string-algorithm", lambda v: embedding(algorithm=v), ValueError, "`algorithm`"),
    Case("simulation-max_turns", lambda v: simulation(max_turns=v), ValueError, "`max_turns`"),
    Case(
        "simulated-user-system", lambda v: simulated_user(system=v), ValueError, "`system`", NOT_STR
    ),
    Case("pairwise-timeout", lambda v: pairwise(timeout=v), TypeError, "`timeout`"),
    Case(
        "rag-judge-max_retries", lambda v: faithfulness(max_retries=v), ValueError, "`max_retries`"
    ),
    Case("graph-judge-timeout", lambda v: graph_judge(timeout=v), TypeError, "`timeout`"),
]


@pytest.mark.parametrize(
    ("case", "kind"),
    [pytest.param(case, kind, id=f"{case.id}-{kind}") for case in CASES for kind in case.values],
)
def test_a_bad_value_gives_a_short_error_naming_the_parameter(case: Case, kind: str) -> None:
    check_bad_value(case, kind)  # the same checks as the other families'


def test_every_case_tries_a_deep_and_a_huge_value_where_the_type_allows() -> None:
    for case in CASES:
        assert {"deep-list", "deep-dict"} <= set(case.values) <= set(ALL), case.id
