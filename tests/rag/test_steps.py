from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openevals.rag.steps import create_async_steps_evaluator, create_steps_evaluator

SPARQL = "application/sparql-results+json"


def uri(value: str) -> dict[str, str]:
    return {"type": "uri", "value": value}


def lit(value: str, **extra: str) -> dict[str, str]:
    return {"type": "literal", "value": value, **extra}


def sparql_json(variables: list[str], rows: list[dict[str, Any]], indent: int | None = None) -> str:
    return json.dumps({"head": {"vars": variables}, "results": {"bindings": rows}}, indent=indent)


# --------------------------------------------------------------------------- the seed's example
# graphrag-eval README, "Example Evaluation Results": question c10bbc8dce98a4b8832d125134a16153.

OSLO_T2 = {
    "transformer": uri("urn:uuid:f1769de8-9aeb-11e5-91da-b8763fd99c5f"),
    "transformerName": lit("OSLO T2"),
}
OSLO_T1 = {
    "transformer": uri("urn:uuid:f1769dd6-9aeb-11e5-91da-b8763fd99c5f"),
    "transformerName": lit("OSLO T1"),
}
OSLO_REFERENCE_STEPS: list[list[dict[str, Any]]] = [
    [
        {
            "name": "sparql_query",
            "args": {
                "query": (
                    "\nPREFIX cimex: <https://rawgit2.com/statnett/Talk2PowerSystem/main/demo1/"
                    "cimex/>\nPREFIX cim: <https://cim.ucaiug.io/ns#>\n"
                    "PREFIX rank: <http://www.ontotext.com/owlim/RDFRank#>\n"
                    "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"
                    "select distinct ?transformer ?transformerName\nwhere {\n"
                    "    bind(<urn:uuid:f176963c-9aeb-11e5-91da-b8763fd99c5f> as ?substation)\n\n"
                    "    ?transformer a cim:PowerTransformer ;\n"
                    "      cim:Equipment.EquipmentContainer ?substation ;\n"
                    "      cim:IdentifiedObject.name ?transformerName .\n}\n"
                )
            },
            "output": sparql_json(["transformer", "transformerName"], [OSLO_T2, OSLO_T1]),
            "output_media_type": SPARQL,
            "required_columns": ["transformer", "transformerName"],
        }
    ]
]
OSLO_ACTUAL_STEPS: list[dict[str, Any]] = [
    {
        "name": "autocomplete_search",
        "args": {"query": "OSLO", "result_class": "cim:Substation"},
        "id": "call_3wIrBHIsInzAWzo8qwwYAkDD",
        "status": "success",
        "output": sparql_json(
            ["iri", "name", "rank"],
            [
                {
                    "iri": uri("urn:uuid:f176963c-9aeb-11e5-91da-b8763fd99c5f"),
                    "name": lit("OSLO"),
                    "rank": lit("0.01185", datatype="http://www.w3.org/2001/XMLSchema#float"),
                }
            ],
            indent=2,
        ),
    },
    {
        "name": "sparql_query",
        "args": {
            "query": (
                "SELECT ?transformer ?transformerName WHERE {\n"
                "  ?transformer a cim:PowerTransformer ;\n"
                "    cim:Equipment.EquipmentContainer "
                "<urn:uuid:f176963c-9aeb-11e5-91da-b8763fd99c5f> ;\n"
                "    cim:IdentifiedObject.name ?transformerName .\n}"
            )
        },
        "id": "call_3b3zHJnBXwYYSg04BiFGAAgO",
        "status": "success",
        "output": sparql_json(["transformer", "transformerName"], [OSLO_T2, OSLO_T1], indent=2),
    },
]


def run(outputs: Any, reference: Any, **options: Any) -> dict[str, Any]:
    result = create_steps_evaluator(**options)(outputs=outputs, reference_outputs=reference)
    assert isinstance(result, dict)
    return dict(result)


def test_seed_example_evaluation_result() -> None:
    result = run(OSLO_ACTUAL_STEPS, OSLO_REFERENCE_STEPS)
    assert result["key"] == "steps_score"
    assert result["score"] == 1.0
    assert result["metadata"]["matches"] == [
        {
            "reference_index": 0,
            "reference_name": "sparql_query",
            "actual_index": 1,
            "actual_id": "call_3b3zHJnBXwYYSg04BiFGAAgO",
        }
    ]
    assert result["metadata"]["matched"] == 1
    assert result["metadata"]["unmatched_reference"] == []
    assert "1 of 1" in result["comment"]


def test_seed_example_matches_although_the_queries_differ() -> None:
    # The seed's reference and actual SPARQL texts differ, yet the step matched on its results.
    assert OSLO_REFERENCE_STEPS[0][0]["args"] != OSLO_ACTUAL_STEPS[1]["args"]
    assert run(OSLO_ACTUAL_STEPS, OSLO_REFERENCE_STEPS, compare_args=True)["score"] == 0.0


def test_seed_shaped_records() -> None:
    target = {
        "question_id": "c10bbc8dce98a4b8832d125134a16153",
        "input_tokens": 221339,
        "actual_steps": OSLO_ACTUAL_STEPS,
        "actual_answer": "OSLO T2, OSLO T1",
    }
    reference = {
        "id": "c10bbc8dce98a4b8832d125134a16153",
        "question_text": "List all transformers within Substation OSLO",
        "reference_steps": OSLO_REFERENCE_STEPS,
    }
    assert run(target, reference)["score"] == 1.0
    # a flat list of steps is one level
    assert run(OSLO_ACTUAL_STEPS, OSLO_REFERENCE_STEPS[0])["score"] == 1.0


def test_target_error_record_scores_zero_with_the_message() -> None:
    target = {"question_id": "a8daaf98b84b4f6b0e0052fb942bf6b6", "error": "boom", "status": "error"}
    result = run(target, OSLO_REFERENCE_STEPS)
    assert result["score"] == 0.0
    assert result["metadata"]["target_error"] == "boom"
    assert "boom" in result["comment"]


# Aggregates in the seed: a template where only autocomplete_search ran scores 0; one where
# sparql_query failed several times and then succeeded scores 1.


def test_only_the_lookup_step_ran_scores_zero() -> None:
    assert run(OSLO_ACTUAL_STEPS[:1], OSLO_REFERENCE_STEPS)["score"] == 0.0


def test_failed_steps_never_match_but_a_later_success_does() -> None:
    failed = {**OSLO_ACTUAL_STEPS[1], "id": "call_err", "status": "error", "error": "bad prefix"}
    only_failed = [OSLO_ACTUAL_STEPS[0], failed, failed]
    assert run(only_failed, OSLO_REFERENCE_STEPS)["score"] == 0.0
    result = run([*only_failed, OSLO_ACTUAL_STEPS[1]], OSLO_REFERENCE_STEPS)
    assert result["score"] == 1.0
    assert result["metadata"]["matches"][0]["actual_index"] == 3


# --------------------------------------------------------------------------- SPARQL results

NO2 = [
    ("f1769670", "ARENDAL"),
    ("f176968e", "BLAFALLI"),
    ("f1769664", "STAVANGER"),
    ("f1769676", "KRISTIA_HVDC"),
    ("f1769682", "KVILLDAL"),
    ("f176966a", "SANDEFJORD"),
    ("f176965a", "KRISTIANSAND"),
    ("f176967c", "FEDA_HVDC"),
]


def substation_rows(pairs: list[tuple[str, str]], **extra: Any) -> list[dict[str, Any]]:
    return [
        {
            "substation": uri(f"urn:uuid:{code}-9aeb-11e5-91da-b8763fd99c5f"),
            "substationName": lit(name),
            **extra,
        }
        for code, name in pairs
    ]


def substation_reference(ordered: Any = None, **step: Any) -> list[list[dict[str, Any]]]:
    ref: dict[str, Any] = {
        "name": "sparql_query",
        "args": {"query": "select distinct ?substation ?substationName where { ... }"},
        "output": sparql_json(["substation", "substationName"], substation_rows(NO2)),
        "output_media_type": SPARQL,
        "required_columns": ["substation", "substationName"],
        **step,
    }
    if ordered is not None:
        ref["ordered"] = ordered
    return [[ref]]


def actual_query(output: Any, **step: Any) -> dict[str, Any]:
    return {"name": "sparql_query", "args": {"query": "..."}, "id": "q", "status": "success",
            "output": output, **step}  # fmt: skip


@pytest.mark.parametrize("ordered", [None, False])
def test_unordered_rows_compare_as_multisets(ordered: bool | None) -> None:
    shuffled = sparql_json(["substation", "substationName"], substation_rows(NO2[::-1]))
    assert run([actual_query(shuffled)], substation_reference(ordered))["score"] == 1.0


def test_ordered_rows_compare_as_sequences() -> None:
    same = sparql_json(["substation", "substationName"], substation_rows(NO2))
    shuffled = sparql_json(["substation", "substationName"], substation_rows(NO2[::-1]))
    assert run([actual_query(same)], substation_reference(True))["score"] == 1.0
    assert run([actual_query(shuffled)], substation_reference(True))["score"] == 0.0


def test_rows_are_a_multiset_not_a_set() -> None:
    doubled = sparql_json(["substation", "substationName"], substation_rows(NO2 + NO2[:1]))
    missing = sparql_json(["substation", "substationName"], substation_rows(NO2[1:]))
    assert run([actual_query(doubled)], substation_reference())["score"] == 0.0
    assert run([actual_query(missing)], substation_reference())["score"] == 0.0
    # same length, same distinct rows, different multiplicities
    aab = sparql_json(["substation", "substationName"], substation_rows(NO2[:2] + NO2[:1]))
    abb = sparql_json(["substation", "substationName"], substation_rows(NO2[:2] + NO2[1:2]))
    reference = substation_reference(output=aab)
    assert run([actual_query(aab)], reference)["score"] == 1.0
    assert run([actual_query(abb)], reference)["score"] == 0.0


def test_only_required_columns_are_compared() -> None:
    extra = sparql_json(
        ["substation", "substationName", "rank"],
        substation_rows(NO2, rank=lit("0.5")),
    )
    assert run([actual_query(extra)], substation_reference())["score"] == 1.0
    # only `substation` required: names may differ
    renamed = sparql_json(
        ["substation", "substationName"],
        substation_rows([(code, name.lower()) for code, name in NO2]),
    )
    assert run([actual_query(renamed)], substation_reference())["score"] == 0.0
    assert (
        run([actual_query(renamed)], substation_reference(required_columns=["substation"]))["score"]
        == 1.0
    )
    # a required column the actual result lacks
    no_names = sparql_json(
        ["substation"],
        [{"substation": row["substation"]} for row in substation_rows(NO2)],
    )
    assert run([actual_query(no_names)], substation_reference())["score"] == 0.0


def test_default_columns_are_the_reference_variables() -> None:
    reference = substation_reference()
    del reference[0][0]["required_columns"]
    extra = sparql_json(["substation", "substationName", "x"], substation_rows(NO2, x=lit("1")))
    assert run([actual_query(extra)], reference)["score"] == 1.0


def test_sparql_term_normalisation() -> None:
    reference = [
        [
            {
                "name": "q",
                "output": sparql_json(
                    ["s", "l", "b"],
                    [
                        {
                            "s": lit("x"),
                            "l": lit("hei", **{"xml:lang": "no"}),
                            "b": {"type": "bnode", "value": "b0"},
                        }
                    ],
                ),
                "output_media_type": SPARQL,
            }
        ]
    ]
    actual = sparql_json(
        ["s", "l", "b"],
        [
            {
                "s": {
                    "type": "typed-literal",
                    "value": "x",
                    "datatype": "http://www.w3.org/2001/XMLSchema#string",
                },
                "l": lit("hei", **{"xml:lang": "NO"}),
                "b": {"type": "bnode", "value": "genid-77"},
            }
        ],
    )
    assert run([{"name": "q", "output": actual}], reference)["score"] == 1.0
    other_lang = actual.replace('"NO"', '"en"')
    assert run([{"name": "q", "output": other_lang}], reference)["score"] == 0.0
    uri_not_literal = actual.replace('"typed-literal"', '"uri"')
    assert run([{"name": "q", "output": uri_not_literal}], reference)["score"] == 0.0


def test_ask_results() -> None:
    reference = [
        [{"name": "ask", "output": '{"head": {}, "boolean": true}', "output_media_type": SPARQL}]
    ]
    assert (
        run([{"name": "ask", "output": {"head": {}, "boolean": True}}], reference)["score"] == 1.0
    )
    assert run([{"name": "ask", "output": '{"boolean": false}'}], reference)["score"] == 0.0
    select = sparql_json(["x"], [])
    assert run([{"name": "ask", "output": select}], reference)["score"] == 0.0


def test_parsed_outputs_are_accepted() -> None:
    parsed = json.loads(OSLO_ACTUAL_STEPS[1]["output"])
    step = {**OSLO_ACTUAL_STEPS[1], "output": parsed}
    assert run([step], OSLO_REFERENCE_STEPS)["score"] == 1.0


@pytest.mark.parametrize("bad", ["not json", "[1, 2]", '{"head": {}}', None, 42])
def test_malformed_actual_output_is_a_mismatch_not_an_error(bad: Any) -> None:
    assert run([actual_query(bad)], substation_reference())["score"] == 0.0


# --------------------------------------------------------------------------- JSON, tables, text


def json_reference(output: Any, **extra: Any) -> list[list[dict[str, Any]]]:
    return [[{"name": "tool", "output": output, "output_media_type": "application/json", **extra}]]


def test_json_equality() -> None:
    reference = json_reference('{"a": 1, "b": [1, 2.5, {"c": null}]}')
    assert (
        run([{"name": "tool", "output": '{"b": [1.0, 2.5, {"c": null}], "a": 1}'}], reference)[
            "score"
        ]
        == 1.0
    )
    assert (
        run([{"name": "tool", "output": {"a": 1.0, "b": [1, 2.5, {"c": None}]}}], reference)[
            "score"
        ]
        == 1.0
    )
    assert (
        run([{"name": "tool", "output": '{"a": true, "b": [1, 2.5, {"c": null}]}'}], reference)[
            "score"
        ]
        == 0.0
    )
    assert (
        run([{"name": "tool", "output": '{"a": 1, "b": [2.5, 1, {"c": null}]}'}], reference)[
            "score"
        ]
        == 0.0
    )


def test_json_row_lists_become_tables_when_asked() -> None:
    rows = [{"id": 1, "name": "A", "noise": 0.1}, {"id": 2, "name": "B", "noise": 0.2}]
    swapped = [{"id": 2, "name": "B", "noise": 9}, {"id": 1, "name": "A", "noise": 9}]
    plain = json_reference(rows)
    assert run([{"name": "tool", "output": swapped}], plain)["score"] == 0.0
    table = json_reference(rows, required_columns=["id", "name"])
    assert run([{"name": "tool", "output": swapped}], table)["score"] == 1.0
    ordered = json_reference(rows, required_columns=["id", "name"], ordered=True)
    assert run([{"name": "tool", "output": swapped}], ordered)["score"] == 0.0
    assert run([{"name": "tool", "output": swapped[::-1]}], ordered)["score"] == 1.0
    assert run([{"name": "tool", "output": {"id": 1}}], table)["score"] == 0.0


@pytest.mark.parametrize(
    ("media_type", "sep"), [("text/csv", ","), ("text/tab-separated-values", "\t")]
)
def test_csv_and_tsv_tables(media_type: str, sep: str) -> None:
    reference_text = (
        sep.join(["city", "country"])
        + "\n"
        + sep.join(["Oslo", "NO"])
        + "\n"
        + sep.join(["Bergen", "NO"])
    )
    step: dict[str, Any] = {
        "name": "t",
        "output": reference_text,
        "output_media_type": media_type,
        "required_columns": ["city"],
    }
    reference = [[step]]
    actual = (
        sep.join(["country", "city", "pop"])
        + "\n"
        + sep.join(["X", "Bergen", "1"])
        + "\n"
        + sep.join(["Y", "Oslo", "2"])
    )
    assert run([{"name": "t", "output": actual}], reference)["score"] == 1.0
    reference[0][0]["ordered"] = True
    assert run([{"name": "t", "output": actual}], reference)["score"] == 0.0
    assert run([{"name": "t", "output": "town\nOslo\nBergen"}], reference)["score"] == 0.0


def test_text_outputs_compare_exactly() -> None:
    reference = [[{"name": "calc", "output": "42"}]]
    assert run([{"name": "calc", "output": "42"}], reference)["score"] == 1.0
    assert run([{"name": "calc", "output": "42.0"}], reference)["score"] == 0.0
    assert run([{"name": "calc", "output": 42}], reference)["score"] == 0.0


def test_reference_step_without_output_matches_on_name_and_args() -> None:
    reference = [[{"name": "search", "args": {"q": "oslo", "limit": 5}}]]
    assert run([{"name": "search", "args": '{"limit": 5, "q": "oslo"}'}], reference)["score"] == 1.0
    assert run([{"name": "search", "args": {"q": "oslo"}}], reference)["score"] == 0.0
    assert run([{"name": "lookup", "args": {"q": "oslo", "limit": 5}}], reference)["score"] == 0.0
    assert run([{"name": "search", "args": {"q": 1}}], [[{"name": "search"}]])["score"] == 1.0


# --------------------------------------------------------------------------- levels and matching


def named(name: str, output: str, step_id: str | None = None, **extra: Any) -> dict[str, Any]:
    step: dict[str, Any] = {"name": name, "output": output, "status": "success", **extra}
    if step_id is not None:
        step["id"] = step_id
    return step


def test_only_the_last_level_counts() -> None:
    reference = [
        [named("lookup", "A")],
        [named("query", "B"), named("query", "C"), named("count", "3")],
    ]
    actual = [named("query", "C", "c1"), named("count", "3", "c2")]
    result = run(actual, reference)
    assert result["score"] == pytest.approx(2 / 3)
    assert result["metadata"]["reference_level"] == 1
    assert result["metadata"]["reference_steps"] == 3
    assert result["metadata"]["unmatched_reference"] == [0]
    assert [m["actual_id"] for m in result["metadata"]["matches"]] == ["c1", "c2"]


def test_each_actual_step_serves_one_reference_step() -> None:
    reference = [[named("query", "B"), named("query", "B")]]
    assert run([named("query", "B")], reference)["score"] == 0.5
    assert run([named("query", "B"), named("query", "B")], reference)["score"] == 1.0


def test_matching_is_optimal_where_first_fit_fails() -> None:
    rows_x = [{"x": 1}]
    rows_xy = [{"x": 1, "y": 1}]
    loose = {
        "name": "q",
        "output": json.dumps(rows_x),
        "output_media_type": "application/json",
        "required_columns": ["x"],
    }
    strict = {
        "name": "q",
        "output": json.dumps(rows_xy),
        "output_media_type": "application/json",
        "required_columns": ["x", "y"],
    }
    fits_both = named("q", json.dumps([{"x": 1, "y": 1}]), "both")
    fits_loose = named("q", json.dumps([{"x": 1, "y": 2}]), "loose")
    for actual in ([fits_both, fits_loose], [fits_loose, fits_both]):
        for reference in ([[loose, strict]], [[strict, loose]]):
            result = run(actual, reference)
            assert result["score"] == 1.0
            pairs = {m["reference_index"]: m["actual_id"] for m in result["metadata"]["matches"]}
            strict_index = reference[0].index(strict)
            assert pairs[strict_index] == "both"


def test_ties_prefer_the_latest_actual_step() -> None:
    actual = [named("query", "B", "early"), named("other", "x"), named("query", "B", "late")]
    result = run(actual, [[named("query", "B")]])
    assert result["metadata"]["matches"][0]["actual_id"] == "late"
    assert result["metadata"]["matches"][0]["actual_index"] == 2


def test_steps_without_id_report_none() -> None:
    result = run([{"name": "query", "output": "B"}], [[named("query", "B")]])
    assert result["metadata"]["matches"][0]["actual_id"] is None


def test_no_actual_steps() -> None:
    cases: list[Any] = [[], None, {"actual_steps": []}]
    for outputs in cases:
        result = run(outputs, OSLO_REFERENCE_STEPS)
        assert result["score"] == 0.0
        assert result["metadata"]["matches"] == []


def test_custom_feedback_key() -> None:
    result = run(OSLO_ACTUAL_STEPS, OSLO_REFERENCE_STEPS, feedback_key="tool_steps")
    assert result["key"] == "tool_steps"


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("outputs", "reference", "exc", "pattern"),
    [
        ([], None, TypeError, "`reference_outputs` must be a non-empty list"),
        ([], [], TypeError, "`reference_outputs` must be a non-empty list"),
        ([], "steps", TypeError, "`reference_outputs` must be a non-empty list"),
        ([], {"question": "x"}, ValueError, "'reference_steps'"),
        ([], [[]], ValueError, r"reference_outputs\[0\] is an empty level"),
        ([], [[{"name": "a"}], {"name": "b"}], TypeError, "mixes step dicts and levels"),
        ([], [["a"]], TypeError, r"reference_outputs\[0\]\[0\] must be a step dict"),
        ([], [[{"args": {}}]], ValueError, r"reference_outputs\[0\]\[0\] needs a non-empty"),
        (
            [],
            [[{"name": "q", "output": "nope", "output_media_type": SPARQL}]],
            ValueError,
            r"reference_outputs\[0\]\[0\]\['output'\] is not SPARQL results JSON",
        ),
        (
            [],
            [[{"name": "q", "output": "{", "output_media_type": "application/json"}]],
            ValueError,
            "is not valid JSON",
        ),
        (
            [],
            substation_reference(required_columns=["substation", "voltage"]),
            ValueError,
            r"required_columns'\] names \['voltage'\]",
        ),
        (
            [],
            substation_reference(required_columns="substation"),
            TypeError,
            "required_columns",
        ),
        (
            [],
            substation_reference(ordered="yes"),
            TypeError,
            r"\['ordered'\] must be true or false",
        ),
        (
            [],
            [[{"name": "q", "output": "a", "output_media_type": 3}]],
            TypeError,
            "output_media_type",
        ),
        ("steps", OSLO_REFERENCE_STEPS, TypeError, "`outputs` must be a list of step dicts"),
        ({"answer": "x"}, OSLO_REFERENCE_STEPS, ValueError, "'actual_steps'"),
        (["step"], OSLO_REFERENCE_STEPS, TypeError, r"outputs\[0\] must be a step dict"),
        ([{"output": "x"}], OSLO_REFERENCE_STEPS, ValueError, r"outputs\[0\] needs a non-empty"),
    ],
)
def test_bad_input_errors_name_the_parameter(
    outputs: Any, reference: Any, exc: type[Exception], pattern: str
) -> None:
    with pytest.raises(exc, match=pattern):
        run(outputs, reference)


def test_bad_options() -> None:
    with pytest.raises(TypeError, match="compare_args"):
        create_steps_evaluator(compare_args="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="feedback_key"):
        create_async_steps_evaluator(feedback_key="")
    with pytest.raises(TypeError):
        create_steps_evaluator(True)  # type: ignore[call-arg]


def test_inputs_are_not_mutated() -> None:
    actual = copy.deepcopy(OSLO_ACTUAL_STEPS)
    reference = copy.deepcopy(OSLO_REFERENCE_STEPS)
    run(actual, reference)
    assert actual == OSLO_ACTUAL_STEPS
    assert reference == OSLO_REFERENCE_STEPS


async def test_async_twin_agrees() -> None:
    sync = create_steps_evaluator()
    asynchronous = create_async_steps_evaluator()
    cases = [
        (OSLO_ACTUAL_STEPS, OSLO_REFERENCE_STEPS),
        (OSLO_ACTUAL_STEPS[:1], OSLO_REFERENCE_STEPS),
        ({"status": "error", "error": "x"}, OSLO_REFERENCE_STEPS),
        ([named("query", "C")], [[named("query", "B"), named("query", "C")]]),
    ]
    for outputs, reference in cases:
        got = await asynchronous(outputs=outputs, reference_outputs=reference)
        assert got == sync(outputs=outputs, reference_outputs=reference)
    with pytest.raises(ValueError, match="empty level"):
        await asynchronous(outputs=[], reference_outputs=[[]])


# --------------------------------------------------------------------------- properties

step_names = st.sampled_from(["q", "r"])
step_outputs = st.sampled_from(["1", "2", "3"])
ref_steps = st.lists(st.tuples(step_names, step_outputs), min_size=1, max_size=5)
act_steps = st.lists(
    st.tuples(step_names, step_outputs, st.sampled_from(["success", "error"])), max_size=7
)


def _actual(steps: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    return [
        {"name": n, "output": o, "status": s, "id": f"s{i}"} for i, (n, o, s) in enumerate(steps)
    ]


def _reference(steps: list[tuple[str, str]]) -> list[list[dict[str, Any]]]:
    return [[{"name": n, "output": o} for n, o in steps]]


def _oracle(reference: list[tuple[str, str]], actual: list[tuple[str, str, str]]) -> float:
    # With exact (name, output) equality, the maximum matching size is a multiset intersection.
    from collections import Counter

    usable = Counter((n, o) for n, o, s in actual if s == "success")
    wanted = Counter(reference)
    return sum((usable & wanted).values()) / len(reference)


@settings(max_examples=150, deadline=None)
@given(reference=ref_steps, actual=act_steps, data=st.data())
def test_score_properties(
    reference: list[tuple[str, str]], actual: list[tuple[str, str, str]], data: st.DataObject
) -> None:
    result = run(_actual(actual), _reference(reference))
    score = result["score"]
    assert 0.0 <= score <= 1.0
    assert score == pytest.approx(_oracle(reference, actual))
    assert result["metadata"]["matched"] == len(result["metadata"]["matches"])
    used = [m["actual_index"] for m in result["metadata"]["matches"]]
    assert len(used) == len(set(used))
    for m in result["metadata"]["matches"]:
        step = actual[m["actual_index"]]
        assert step[2] == "success"
        assert (step[0], step[1]) == reference[m["reference_index"]]
    # order of the actual steps does not change the score
    shuffled = data.draw(st.permutations(actual))
    assert run(_actual(shuffled), _reference(reference))["score"] == score
    # executing every reference step (in any order, among failures) scores 1
    perfect = [(n, o, "success") for n, o in reference] + [(n, o, "error") for n, o, _ in actual]
    perfect = data.draw(st.permutations(perfect))
    assert run(_actual(perfect), _reference(reference))["score"] == 1.0
    assert asyncio.run(
        create_async_steps_evaluator()(
            outputs=_actual(actual), reference_outputs=_reference(reference)
        )
    ) == create_steps_evaluator()(outputs=_actual(actual), reference_outputs=_reference(reference))
