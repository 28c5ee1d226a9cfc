"""Every name a dependent could import from a 0.2.2 module imports here too.

0.2.2's modules bind more than their API: the names they import for their own use
(``from openevals.llm import ChatCompletionMessage, Optional`` works there, and agentevals 0.0.9
depends on it) and their private helpers. ``public_modules_0_2_2.json`` lists them per module
(``incidental_imports`` and ``other_importable``, generated from the 0.2.2 release by
``scripts/build_public_module_list.py``). Each one imports from our module of the same path, or
is in ``NOT_KEPT`` below with the reason.
"""

from __future__ import annotations

import importlib
import json
import typing
from pathlib import Path
from typing import Any

import pytest

from openevals import _incidental

DATA: dict[str, Any] = json.loads(
    Path(__file__).with_name("public_modules_0_2_2.json").read_text(encoding="utf-8")
)
MODULES: dict[str, dict[str, Any]] = DATA["modules"]

_HELPER = "a private helper of 0.2.2's implementation, which ours does not have in that form"
_SANDBOX = "0.2.2's sandbox script source; our E2B evaluators run other commands"

# (module, name) -> why it is not importable here. Public repositories were searched for imports
# of each (agentevals 0.0.9 and third-party code import only names that are kept).
NOT_KEPT: dict[tuple[str, str], str] = {
    ("openevals.code.e2b.execution", "EXTRACT_IMPORT_NAMES"): _SANDBOX,
    ("openevals.code.e2b.execution", "PYTHON_EVALUATOR_SEPARATOR"): _SANDBOX,
    ("openevals.code.e2b.execution", "_create_e2b_execution_command"): _SANDBOX,
    ("openevals.code.e2b.pyright", "EXTRACT_IMPORT_NAMES"): _SANDBOX,
    ("openevals.code.e2b.pyright", "PYTHON_EVALUATOR_FILE"): _SANDBOX,
    ("openevals.code.e2b.pyright", "PYTHON_EVALUATOR_SEPARATOR"): _SANDBOX,
    ("openevals.code.mypy", "_analyze_with_mypy"): f"{_HELPER}: mypy runs as a batch flow",
    ("openevals.code.mypy", "_analyze_with_mypy_async"): f"{_HELPER}: mypy runs as a batch flow",
    ("openevals.code.mypy", "_parse_mypy_output"): f"{_HELPER}: output is parsed per batch",
    ("openevals.code.pyright", "_analyze_with_pyright"): f"{_HELPER}: pyright runs per batch",
    ("openevals.code.pyright", "_analyze_with_pyright_async"): f"{_HELPER}: pyright runs per batch",
    ("openevals.code.pyright", "_parse_pyright_output"): f"{_HELPER}: output is parsed per batch",
    ("openevals.exact", "_scorer"): f"{_HELPER}: the scorer is built by the evaluator contract",
    ("openevals.string.levenshtein", "_scorer"): f"{_HELPER}: rapidfuzz scores it",
    ("openevals.json.match", "_EMPTY_RECORD_KEY"): f"{_HELPER}: records are paired by matching",
    ("openevals.json.match", "_aggregate_results"): f"{_HELPER}: aggregation lives in json/",
    ("openevals.json.match", "_prepare_parameters"): f"{_HELPER}: checks run at creation",
    ("openevals.json.match", "_validate_parameters"): f"{_HELPER}: checks run at creation",
    ("openevals.llm", "_append_few_shot_examples"): f"{_HELPER}: prompts build in _judge/",
    ("openevals.llm", "_construct_default_output_json_schema"): f"{_HELPER}: see _judge/schema",
    ("openevals.llm", "_stringify_prompt_param"): f"{_HELPER}: prompts build in _judge/",
    ("openevals.simulators.multiturn", "_awrap"): f"{_HELPER}: apps are wrapped once",
    ("openevals.simulators.multiturn", "_wrap"): f"{_HELPER}: apps are wrapped once",
    ("openevals.simulators.multiturn", "_coerce_and_assign_id_to_message"): _HELPER,
    ("openevals.simulators.multiturn", "_create_static_simulated_user"): _HELPER,
    ("openevals.simulators.multiturn", "_trajectory_reducer"): _HELPER,
    ("openevals.string.embedding_similarity", "_handle_embedding_outputs"): _HELPER,
    ("openevals.trajectory.llm", "_format_inputs"): f"{_HELPER}: transcripts in _messages",
    ("openevals.trajectory.utils", "_exact_match"): f"{_HELPER}: tool-argument rules",
    ("openevals.trajectory.utils", "_get_matcher_for_comparison_mode"): _HELPER,
    ("openevals.trajectory.utils", "_get_partial_matcher_on_keys"): _HELPER,
    ("openevals.trajectory.utils", "_ignore_match"): f"{_HELPER}: tool-argument rules",
    ("openevals.trajectory.utils", "_normalize_tool_call"): f"{_HELPER}: see trajectory/",
    ("openevals.trajectory.utils", "_subset_match"): f"{_HELPER}: tool-argument rules",
    ("openevals.trajectory.utils", "_superset_match"): f"{_HELPER}: tool-argument rules",
    ("openevals.utils", "_add_metadata_and_inputs_to_run_tree"): f"{_HELPER}: tracing differs",
    ("openevals.utils", "_normalize_attachment_mime_type"): f"{_HELPER}: see _attachments",
}

BOUND = sorted(
    (module, name, source)
    for module, entry in MODULES.items()
    for name, source in {**entry["incidental_imports"], **entry["other_importable"]}.items()
)


def _id(item: tuple[str, ...]) -> str:
    return f"{item[0]}:{item[1]}"


def test_the_list_covers_what_agentevals_imports() -> None:
    pairs = {(m, n) for m, n, _ in BOUND}
    for name in ("ChatCompletionMessage", "ModelClient", "Optional", "Union", "Callable"):
        assert ("openevals.llm", name) in pairs
    assert len(BOUND) > 250


@pytest.mark.parametrize("item", [b for b in BOUND if b[:2] not in NOT_KEPT], ids=_id)
def test_bound_name_imports(item: tuple[str, str, str]) -> None:
    module, name, source = item
    if module.startswith("openevals.code.e2b"):
        pytest.importorskip("e2b_code_interpreter")
    if "." not in source and source != "defined":
        return  # ``import json`` in 0.2.2's source binds a module, not a name of its API
    namespace: dict[str, Any] = {}
    exec(f"from {module} import {name}", namespace)  # the statement a dependent writes
    value = namespace[name]
    origin, _, attribute = source.rpartition(".")
    if source != "defined" and not origin.startswith("openevals"):
        try:
            expected = getattr(importlib.import_module(origin), attribute)
        except ImportError:  # an optional dependency (langchain's init_chat_model)
            return
        # Ours may bind the collections.abc class typing aliases (Callable, Awaitable); both
        # annotate the same way. init_chat_model is our patch point, which forwards to it.
        same = value is expected or typing.get_origin(expected) is value
        assert same or (name in SAME_ROLE and callable(value)), f"{module}.{name} is not {source}"


# Names bound to our own object of the same role: the init_chat_model patch point
# (openevals.llm, which resolves model strings through langchain's when it is installed).
SAME_ROLE = {"init_chat_model"}


@pytest.mark.parametrize("pair", sorted(NOT_KEPT), ids=_id)
def test_not_kept_entries_are_real_and_still_missing(pair: tuple[str, str]) -> None:
    module, name = pair
    entry = MODULES[module]
    assert name in {**entry["incidental_imports"], **entry["other_importable"]}, "stale entry"
    if module.startswith("openevals.code.e2b"):
        pytest.importorskip("e2b_code_interpreter")
    assert not hasattr(importlib.import_module(module), name), "now importable: drop the entry"


def test_the_table_serves_only_listed_names() -> None:
    listed = {(m, n) for m, n, _ in BOUND}
    for module in MODULES:
        for name in _incidental.names(module):
            assert (module, name) in listed, f"{module}.{name} is not a 0.2.2 name"


def test_unknown_names_still_raise_attribute_error() -> None:
    import openevals.llm

    with pytest.raises(AttributeError, match="no_such_name"):
        _ = openevals.llm.no_such_name  # type: ignore[attr-defined]
    with pytest.raises(ImportError):
        exec("from openevals.code.base import no_such_name", {})
