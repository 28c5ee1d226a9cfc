"""The rule behind issue 27, item 3, kept for the future: a message shows values with show().

An f-string that formats a name or expression with ``!r`` (or calls ``repr()`` on one, or maps
``repr`` over several) can raise ``RecursionError`` on a deep value and copies a huge one whole.
A message is often assembled before it is raised (``message = f"...{value!r}"``, a list of
problem lines, a report's text), so the scan covers every such site in ``openevals/``, not only
those inside ``raise``: outside a ``__repr__`` method, each uses ``openevals._repr.show``, or is
listed here with the reason ``repr`` is right there (a value the library itself defines, a
canonical key that is no message, text already bounded) (issue 35, item 8)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "openevals"

# (module path under openevals/, the expression as ast.unparse gives it) -> why !r is right there
ALLOWED: dict[tuple[str, str], str] = {
    (
        "evaluation/fingerprint.py",
        "value",
    ): "an evaluator's identity text for its hash, not a message",
    ("panel.py", "value"): "a hashable stand-in for a vote when tallying, not a message",
    ("viewer/pages.py", "self.below"): "a float written into a page URL's query, not a message",
    ("viewer/pages.py", "self.above"): "a float written into a page URL's query, not a message",
    ("_judge/answers.py", "list(spec.choices)"): (
        "the judge's own choices (numbers checked at creation), shown whole to the model on repair"
    ),
    ("_judge/answers.py", "schema['enum']"): (
        "the enum of a schema compiled at creation, shown whole to the model on repair"
    ),
    ("rag/_items.py", "list(keys)"): "the library's fixed container keys",
    ("rag/_ranking_metrics.py", "list(option.choices)"): "the library's fixed option choices",
    ("rag/_ranking_metrics.py", "accepted"): "the library's sorted metric names",
    ("rag/llm_metrics.py", "raw"): (
        "the error's raw= attribute keeps the whole answer (the message itself uses show)"
    ),
    ("json/_pairing.py", "value"): "a canonical sort/identity key of a scalar, not a message",
    ("json/_pairing.py", "x"): "a canonical sort/identity key of a scalar, not a message",
    ("json/_assign.py", "k"): "a tie-break sort key, not a message",
    ("rag/_steps_compare.py", "value"): "a canonical identity key, not a message",
    ("calibration/fewshot.py", "row.human"): "a grouping key of labels, not a message",
    ("calibration/fewshot.py", "row.judge"): "a grouping key of labels, not a message",
    ("calibration/crossval.py", "row.label"): "a grouping key of labels, not a message",
    ("evaluation/redact.py", "value"): (
        "the text a secret is redacted from (a value too deep to print is dropped), not a message"
    ),
    ("evaluation/records.py", "exc"): (
        "an exception with no text of its own: its repr is its class name and empty arguments"
    ),
    ("graph_trajectory/llm.py", "value"): (
        "a value without a JSON form, rendered into the judge's prompt, not a message"
    ),
    ("_judge/errors.py", "value"): "a str already cut to the snippet limit",
    ("_judge/errors.py", "show(text, limit)"): "already bounded by show",
    ("_judge/errors.py", "value[:limit]"): "a str cut to the snippet limit",
    ("_judge/schema.py", "c"): "the judge's own choices (numbers checked at creation)",
    ("pairwise/judge.py", "o"): "the pairwise judge's own answer options",
    ("rag/steps.py", "name"): "one of the library's field names ('actual_steps', 'steps')",
    ("rag/_ranking_metrics.py", "option.default"): "a documented default of the library",
    ("rag/_ranking_metrics.py", "self.empty_reference"): "one of the library's fixed choices",
    ("string/embedding_similarity.py", "_ALGORITHMS"): "the library's fixed algorithm names",
    ("trajectory/_rules.py", "TRAJECTORY_MATCH_MODES"): "the library's fixed mode names",
    ("trajectory/_rules.py", "TOOL_ARGS_MATCH_MODES"): "the library's fixed mode names",
    ("rag/_ranking_metrics.py", "option.choices"): "the library's fixed option choices",
    ("_repr.py", "value"): "the bounded helper itself, on a value it has checked or cut",
    ("_repr.py", "value[:limit]"): "the bounded helper itself, on a cut value",
}


def _repr_target(node: ast.AST) -> ast.AST | None:
    """What ``node`` formats with ``repr``: ``{x!r}``, ``repr(x)`` or ``map(repr, x)``."""
    if isinstance(node, ast.FormattedValue) and node.conversion == ord("r"):
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) >= 1:
        if node.func.id == "repr" and len(node.args) == 1:
            return node.args[0]
        first = node.args[0]
        if node.func.id == "map" and isinstance(first, ast.Name) and first.id == "repr":
            return node.args[1] if len(node.args) > 1 else first
    return None


def _raised_reprs(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, expression)`` of every ``!r`` / ``repr(...)`` / ``map(repr, ...)`` on a
    non-literal outside a ``__repr__`` method (whose job is a repr)."""
    found: set[tuple[int, str]] = set()
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "__repr__":
            skip.update(id(inner) for inner in ast.walk(node))
    for node in ast.walk(tree):
        target = _repr_target(node)
        if target is None or id(node) in skip or isinstance(target, ast.Constant):
            continue
        found.add((getattr(node, "lineno", 0), ast.unparse(target)))
    return sorted(found)


Scan = Callable[[ast.AST], list[tuple[int, str]]]


def _sites(scan: Scan) -> list[tuple[str, int, str]]:
    """``(module, line, expression)`` of what ``scan`` finds in every module of the package."""
    sites = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        sites.extend((module, line, expr) for line, expr in scan(tree))
    return sites


def _offending(scan: Scan, allowed: dict[tuple[str, str], str], shape: str) -> list[str]:
    return [
        f"openevals/{module}:{line}: {shape.format(expr)}"
        for module, line, expr in _sites(scan)
        if (module, expr) not in allowed
    ]


def _stale(scan: Scan, allowed: dict[tuple[str, str], str]) -> list[tuple[str, str]]:
    present = {(module, expr) for module, _, expr in _sites(scan)}
    return sorted(set(allowed) - present)


# (module path, expression) -> why a container may be printed whole in a message there
ALLOWED_CONTAINERS: dict[tuple[str, str], str] = {
    ("code/extraction.py", "list(CODE_EXTRACTION_STRATEGIES)"): "the library's strategy names",
    ("comparison/paired.py", "list(_JUDGE_OPTIONS)"): "the library's option names",
    ("data/rows.py", "list(_JSON_LIST_KEYS)"): "the library's list keys",
    ("data/langsmith_source.py", "list(_OPTIONS)"): "the library's option names",
    ("testing/cassette.py", "list(_FIELDS)"): "the library's field names",
    ("testing/cassette.py", "key[:16]"): "a hex digest the library computed",
    ("testing/cassette.py", "prompt[:16]"): "a hex digest the library computed",
    ("testing/server.py", "sorted(MALFORMED_REPLIES)"): "the library's reply kinds",
    ("text/_metrics.py", "sorted(bleu_cls.TOKENIZERS)"): "sacrebleu's tokenizer names",
    ("text/_metrics.py", "sorted(bleu_cls.SMOOTH_DEFAULTS)"): "sacrebleu's smoothing names",
    ("text/_metrics.py", "list(ROUGE_TYPES)"): "the library's ROUGE types",
    ("text/reference.py", "sorted(kinds)"): "the library's metric names",
    ("text/reference.py", "sorted(allowed)"): "the metric's own parameter names",
}
_CONTAINER_CALLS = frozenset({"sorted", "list", "tuple", "set", "dict", "frozenset"})
_DISPLAYS = (ast.List, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp)


def _is_message(node: ast.AST) -> bool:
    """A raise, an exception built to be raised or returned, or a warning."""
    if isinstance(node, ast.Raise):
        return node.exc is not None
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    return name.endswith(("Error", "Exception")) or name == "warn"


def _printed_containers(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, expression)`` of every container formatted with ``str`` in a message (a list
    built by ``sorted``/``list``/..., a display or comprehension, a slice): ``str`` of a list is
    the ``repr`` of each item, unbounded and recursive like ``!r``."""
    found: set[tuple[int, str]] = set()
    for node in ast.walk(tree):
        if not _is_message(node):
            continue
        for inner in ast.walk(node):
            if not isinstance(inner, ast.FormattedValue) or inner.conversion == ord("r"):
                continue
            value = inner.value
            if (
                (
                    isinstance(value, ast.Call)
                    and isinstance(value.func, ast.Name)
                    and value.func.id in _CONTAINER_CALLS
                )
                or isinstance(value, _DISPLAYS)
                or (isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice))
            ):
                found.add((inner.lineno, ast.unparse(value)))
    return sorted(found)


def test_messages_print_no_caller_container_whole() -> None:
    offending = _offending(_printed_containers, ALLOWED_CONTAINERS, "{{{}}}")
    assert offending == [], (
        "show containers in messages with openevals._repr.show(...) (a list of a caller's keys "
        "can be long, deep or huge); a list the library itself defines may be allow-listed in "
        "this test with a reason:\n" + "\n".join(offending)
    )


def test_every_allowed_container_site_still_exists() -> None:
    assert _stale(_printed_containers, ALLOWED_CONTAINERS) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('raise ValueError(f"keys: {sorted(keys)}")', [(1, "sorted(keys)")]),
        ('raise ValueError(f"keys: {[k.name for k in items]}")', [(1, "[k.name for k in items]")]),
        ('raise ValueError(f"first: {names[:3]}")', [(1, "names[:3]")]),
        ('raise ValueError(f"keys: {show(sorted(keys))}")', []),
        ('text = f"keys: {sorted(keys)}"', []),
    ],
    ids=["sorted", "comprehension", "slice", "shown", "not-a-message"],
)
def test_the_container_scan_finds_what_it_should(
    source: str, expected: list[tuple[int, str]]
) -> None:
    assert _printed_containers(ast.parse(source)) == expected


def test_raised_messages_show_values_with_the_bounded_helper() -> None:
    offending = _offending(_raised_reprs, ALLOWED, "{{{}!r}}")
    assert offending == [], (
        "show values in raised messages with openevals._repr.show(value), not !r or repr() "
        "(see CONTRIBUTING.md, 'Values in messages'); a value the library itself defines may be allow-listed "
        "in this test with a reason:\n" + "\n".join(offending)
    )


def test_every_allowed_site_still_exists() -> None:
    assert _stale(_raised_reprs, ALLOWED) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('raise ValueError(f"got {value!r}")', [(1, "value")]),
        ('raise TypeError("got " + repr(value))', [(1, "value")]),
        ("raise ValueError(f\"one of {'a'!r}\")", []),
        ('raise ValueError(f"got {show(value)}")', []),
        ('message = f"{value!r}"', [(1, "value")]),
        ('return ValueError(f"got {value!r}")', [(1, "value")]),
        ('warnings.warn(f"got {value!r}")', [(1, "value")]),
        ('text = ", ".join(map(repr, names))', [(1, "names")]),
        ('text = ", ".join(repr(n) for n in names)', [(1, "n")]),
        ('def __repr__(self):\n    return f"X({self.name!r})"', []),
    ],
    ids=[
        "f-string",
        "repr-call",
        "literal",
        "show",
        "assembled-message",
        "returned",
        "warning",
        "map-repr",
        "joined-reprs",
        "dunder-repr",
    ],
)
def test_the_scan_finds_what_it_should(source: str, expected: list[tuple[int, str]]) -> None:
    assert _raised_reprs(ast.parse(source)) == expected
