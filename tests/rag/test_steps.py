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
    cases: list[Any] = [[], {"actual_steps": []}, {"steps": ()}]
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


# --------------------------------------------------------------------------- levels="all" (12.6)
# Expected values below were computed by hand and confirmed with graphrag-eval 6.6.1
# (scripts/compare_steps_graphrag.py cross-checks random cases against the package itself).

OSLO_TWO_LEVELS: list[list[dict[str, Any]]] = [
    [{"name": "autocomplete_search", "args": {"query": "Oslo"}, "output": "urn:oslo"}],
    [{"name": "sparql_query", "output": "OSLO T1, OSLO T2"}],
]


def test_levels_all_is_the_graphrag_6_mean_over_levels() -> None:
    only_sparql = [named("sparql_query", "OSLO T1, OSLO T2", "q1")]
    assert run(only_sparql, OSLO_TWO_LEVELS)["score"] == 1.0
    result = run(only_sparql, OSLO_TWO_LEVELS, levels="all")
    assert result["score"] == 0.5
    assert result["metadata"]["level_scores"] == [0.0, 1.0]
    assert result["metadata"]["unmatched_reference"] == [[0, 0]]
    assert result["metadata"]["matches"] == [
        {
            "reference_level": 1,
            "reference_index": 0,
            "reference_name": "sparql_query",
            "actual_index": 0,
            "actual_id": "q1",
        }
    ]
    both = [named("autocomplete_search", "urn:oslo", "s1"), *only_sparql]
    assert run(both, OSLO_TWO_LEVELS, levels="all")["score"] == 1.0


def test_levels_all_needs_earlier_levels_executed_earlier() -> None:
    # The search ran only after the query: it cannot be what the query was built on.
    late_search = [
        named("sparql_query", "OSLO T1, OSLO T2"),
        named("autocomplete_search", "urn:oslo"),
    ]
    assert run(late_search, OSLO_TWO_LEVELS, levels="all")["score"] == 0.5
    # ... unless the query also ran (again) after it; the latest matching query is used.
    assert run([*late_search, late_search[0]], OSLO_TWO_LEVELS, levels="all")["score"] == 1.0


def test_levels_all_stops_at_the_first_incomplete_level() -> None:
    reference = [
        [named("a", "1")],
        [named("b", "1"), named("b", "2")],
        [named("c", "1")],
    ]
    actual = [named("a", "1"), named("b", "1"), named("c", "1")]
    result = run(actual, reference, levels="all")
    # level 2: 1/1; level 1: 1/2 and incomplete, so level 0 is not searched (graphrag: 0.5)
    assert result["metadata"]["level_scores"] == [0.0, 0.5, 1.0]
    assert result["score"] == pytest.approx(0.5)
    assert "level 1 is not fully matched" in result["comment"]
    assert run(actual, reference)["score"] == 1.0  # last level only


def test_levels_option_is_checked() -> None:
    with pytest.raises(ValueError, match=r"`levels` must be 'last'.*got 'every'"):
        create_steps_evaluator(levels="every")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`levels`"):
        create_async_steps_evaluator(levels=None)  # type: ignore[arg-type]


def test_agrees_with_graphrag_eval_6_6_when_it_is_installed() -> None:
    """Runs scripts/compare_steps_graphrag.py (300 random cases, both level rules and retrieval
    recall) when an interpreter with graphrag-eval 6.6 is available: $GRAPHRAG_EVAL_PYTHON or
    .venv-graphrag/ (graphrag-eval needs Python 3.12, so it cannot live in the project venv)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    candidates = [os.environ.get("GRAPHRAG_EVAL_PYTHON", ""), root / ".venv-graphrag/bin/python"]
    python = next((Path(c) for c in candidates if c and Path(c).exists()), None)
    if python is None:
        pytest.skip("graphrag-eval 6.6 is not installed (see scripts/compare_steps_graphrag.py)")
    script = root / "scripts" / "compare_steps_graphrag.py"
    proc = subprocess.run(
        [sys.executable, str(script), "--graphrag-python", str(python), "--cases", "300"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "max |diff|" in proc.stdout


# --------------------------------------------------------------------------- retrieval (12.7)


def contexts(*ids: str, **extra: Any) -> str:
    return json.dumps([{"id": i, "text": f"text of {i}", **extra} for i in ids])


def retrieval(output: Any, k: Any = None, step_id: str = "r", **extra: Any) -> dict[str, Any]:
    args = {"query": "Oslo"} if k is None else {"query": "Oslo", "k": k}
    return {"name": "retrieval", "args": args, "output": output, "status": "success",
            "id": step_id, **extra}  # fmt: skip


RETRIEVAL_REFERENCE = [[{"name": "retrieval", "output": contexts("u1", "u2", "u3", "u4")}]]


def test_retrieval_step_scores_recall_at_k_of_its_ids() -> None:
    executed = [retrieval(contexts("u1", "u9", "u3", "u8"), k=4)]
    result = run(executed, RETRIEVAL_REFERENCE)
    assert result["score"] == 0.5
    assert result["metadata"]["matches"] == [
        {
            "reference_index": 0,
            "reference_name": "retrieval",
            "actual_index": 0,
            "actual_id": "r",
            "score": 0.5,
        }
    ]
    assert "earn 0.5" in result["comment"]
    # the old text comparison, on request
    assert run(executed, RETRIEVAL_REFERENCE, retrieval_steps=())["score"] == 0.0


def test_retrieval_k_comes_from_the_executed_steps_args() -> None:
    ids = contexts("u1", "u9", "u3", "u8", "u2")
    assert run([retrieval(ids, k=1)], RETRIEVAL_REFERENCE)["score"] == 0.25
    assert run([retrieval(ids, k=4)], RETRIEVAL_REFERENCE)["score"] == 0.5
    assert run([retrieval(ids)], RETRIEVAL_REFERENCE)["score"] == 0.75  # no k: every context
    as_text = {**retrieval(ids), "args": json.dumps({"k": 1})}
    assert run([as_text], RETRIEVAL_REFERENCE)["score"] == 0.25


def test_retrieval_outputs_in_every_accepted_form() -> None:
    parsed = [{"id": "u2"}, {"id": "u4", "score": 0.3}]
    for output in (parsed, json.dumps(parsed), ["u2", "u4"], '["u2", "u4"]'):
        assert run([retrieval(output, k=5)], RETRIEVAL_REFERENCE)["score"] == 0.5
    # a repeated id counts once and still takes a rank
    assert run([retrieval(["u1", "u1", "u2"], k=2)], RETRIEVAL_REFERENCE)["score"] == 0.25
    # reference ids may be bare too, and 1 and "1" differ
    assert run([retrieval([1, "2"])], [[{"name": "retrieval", "output": [1, 2]}]])["score"] == 0.5


@pytest.mark.parametrize(
    "output", ["not json", '{"id": "u1"}', [{"text": "no id"}], [["u1"]], None, 42, [True]]
)
def test_unreadable_retrieval_output_is_no_match(output: Any) -> None:
    assert run([retrieval(output, k=4)], RETRIEVAL_REFERENCE)["score"] == 0.0


def test_no_shared_id_is_no_match_and_failed_retrievals_never_count() -> None:
    result = run([retrieval(contexts("u7", "u8"))], RETRIEVAL_REFERENCE)
    assert result["score"] == 0.0
    assert result["metadata"]["unmatched_reference"] == [0]
    failed = retrieval(contexts("u1", "u2", "u3", "u4"), status="error")
    assert run([failed], RETRIEVAL_REFERENCE)["score"] == 0.0


def test_retrieval_pairing_maximises_total_recall() -> None:
    # graphrag-eval gives each reference step the latest executed step with recall > 0
    # (here: r2 -> 1/2 for reference 1, then nothing for reference 0: 0.25 in all). The best
    # pairing is r1 -> reference 1 (1/2) and r2 -> reference 0 (1/1): (1 + 1/2) / 2.
    reference = [
        [
            {"name": "retrieval", "output": contexts("u1")},
            {"name": "retrieval", "output": contexts("u2", "u3")},
        ]
    ]
    executed = [
        retrieval(contexts("u2"), step_id="r1"),
        retrieval(contexts("u1", "u3"), step_id="r2"),
    ]
    result = run(executed, reference)
    assert result["score"] == 0.75
    pairs = {
        m["reference_index"]: (m["actual_id"], m["score"]) for m in result["metadata"]["matches"]
    }
    assert pairs == {0: ("r2", 1.0), 1: ("r1", 0.5)}


def test_retrieval_ties_prefer_the_latest_step() -> None:
    executed = [
        retrieval(contexts("u1"), step_id="early"),
        retrieval(contexts("u2"), step_id="late"),
    ]
    result = run(executed, RETRIEVAL_REFERENCE)
    assert result["score"] == 0.25
    assert result["metadata"]["matches"][0]["actual_id"] == "late"


def test_retrieval_steps_mix_with_other_steps_and_custom_names() -> None:
    reference = [
        [
            {"name": "search_docs", "output": contexts("u1", "u2")},
            {"name": "search_docs", "args": {"query": "b"}},  # no output: matched on args
            named("answer", "42"),
        ]
    ]
    executed = [
        {"name": "search_docs", "args": {"query": "b"}, "output": contexts("u9")},
        {"name": "search_docs", "args": {"query": "a", "k": 3}, "output": contexts("u2", "u5")},
        named("answer", "42"),
    ]
    default = run(executed, reference)
    assert default["score"] == pytest.approx(2 / 3)  # search_docs output compared as text
    custom = run(executed, reference, retrieval_steps=["search_docs"])
    assert custom["score"] == pytest.approx((0.5 + 1 + 1) / 3)
    strict = {"retrieval_steps": ["search_docs"], "compare_args": True}
    assert run(executed, reference, **strict)["score"] == pytest.approx(2.5 / 3)  # no args: free
    reference[0][0]["args"] = {"query": "z"}
    assert run(executed, reference, **strict)["score"] == pytest.approx(2 / 3)
    reference[0][0]["args"] = '{"k": 3, "query": "a"}'
    assert run(executed, reference, **strict)["score"] == pytest.approx(2.5 / 3)


def test_retrieval_levels_all() -> None:
    reference = [RETRIEVAL_REFERENCE[0], [named("answer", "42")]]
    executed = [retrieval(contexts("u1", "u2", "u3"), k=2), named("answer", "42")]
    result = run(executed, reference, levels="all")
    assert result["metadata"]["level_scores"] == [0.5, 1.0]
    assert result["score"] == 0.75
    assert result["metadata"]["matches"][0]["score"] == 0.5


@pytest.mark.parametrize(
    ("reference_output", "pattern"),
    [
        ("not json", "must list the relevant contexts"),
        ('{"id": "u1"}', "must list the relevant contexts"),
        ([{"text": "no id"}], "item 0 has no string or int id"),
        ([], "lists no context"),
    ],
)
def test_bad_retrieval_reference_output(reference_output: Any, pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern) as info:
        run([], [[{"name": "retrieval", "output": reference_output}]])
    assert r"reference_outputs[0][0]['output']" in str(info.value)


@pytest.mark.parametrize("k", [0, -1, 2.5, "4", True])
def test_bad_retrieval_k(k: Any) -> None:
    with pytest.raises(ValueError, match=r"outputs\[0\]\['args'\]\['k'\] .* must be an int >= 1"):
        run([retrieval(contexts("u1"), k=k)], RETRIEVAL_REFERENCE)


@pytest.mark.parametrize("bad", ["retrieval", [""], [1], None, {"retrieval": 1}])
def test_bad_retrieval_steps_option(bad: Any) -> None:
    with pytest.raises(TypeError, match="`retrieval_steps` must be"):
        create_steps_evaluator(retrieval_steps=bad)


# --------------------------------------------------------------------------- optimality vs brute force


def _pair_credit(ref: dict[str, Any], step: dict[str, Any], **options: Any) -> float:
    score = run([step], [[ref]], **options)["score"]
    assert isinstance(score, float)
    return score


def _best_by_brute_force(credit: list[list[float]]) -> tuple[float, int, int]:
    """(total credit, pairs, sum of (actual index + 1)) of the best assignment, by enumeration."""
    from itertools import permutations

    n, m = len(credit), len(credit[0]) if credit else 0
    best = (0.0, 0, 0)
    slots = list(range(m)) + [None] * n
    for choice in set(permutations(slots, n)):
        pairs = [(i, j) for i, j in enumerate(choice) if j is not None and credit[i][j] > 0]
        total = sum(credit[i][j] for i, j in pairs)
        key = (round(total, 9), len(pairs), sum(j + 1 for _, j in pairs))
        best = max(best, key)
    return best


retrieval_refs = st.lists(
    st.sampled_from(["u1", "u2", "u3", "u4"]), min_size=1, max_size=3, unique=True
)
mixed_ref = st.one_of(
    st.builds(lambda o: {"name": "q", "output": o}, st.sampled_from(["1", "2"])),
    st.builds(lambda ids: {"name": "retrieval", "output": ids}, retrieval_refs),
    st.builds(lambda a: {"name": "retrieval", "args": {"a": a}}, st.integers(0, 1)),
)
mixed_actual = st.one_of(
    st.builds(lambda o, s: {"name": "q", "output": o, "status": s},
              st.sampled_from(["1", "2"]), st.sampled_from(["success", "error"])),
    st.builds(lambda ids, k, a: {"name": "retrieval", "args": {"a": a, "k": k}, "output": ids},
              st.lists(st.sampled_from(["u1", "u2", "u3", "u4", "u5"]), max_size=4),
              st.integers(1, 4), st.integers(0, 1)),
)  # fmt: skip


@settings(max_examples=120, deadline=None)
@given(
    reference=st.lists(mixed_ref, min_size=1, max_size=4),
    actual=st.lists(mixed_actual, max_size=5),
)
def test_pairing_is_optimal_against_brute_force(
    reference: list[dict[str, Any]], actual: list[dict[str, Any]]
) -> None:
    for steps in actual:
        steps.setdefault("status", "success")
    credit = [[_pair_credit(r, a) for a in actual] for r in reference]
    best_total, best_pairs, best_lateness = _best_by_brute_force(credit)
    result = run(actual, [reference])
    assert result["score"] == pytest.approx(best_total / len(reference), abs=1e-9)
    matches = result["metadata"]["matches"]
    assert len({m["actual_index"] for m in matches}) == len(matches)
    for m in matches:
        expected = credit[m["reference_index"]][m["actual_index"]]
        assert expected > 0
        assert m.get("score", 1.0) == expected
    if all(c in (0.0, 1.0) for row in credit for c in row):
        # unit credits: a maximum matching that uses the latest steps, exactly
        assert len(matches) == best_pairs
        assert sum(m["actual_index"] + 1 for m in matches) == best_lateness


# --------------------------------------------------------------------------- the solvers


@settings(max_examples=150, deadline=None)
@given(
    capacities=st.lists(st.integers(1, 2), min_size=1, max_size=3),
    raw_fits=st.lists(st.sets(st.integers(0, 2), max_size=3), max_size=6),
)
def test_class_matching_is_the_latest_maximum_matching(
    capacities: list[int], raw_fits: list[set[int]]
) -> None:
    from itertools import product

    from openevals.rag._steps_assign import latest_class_matching

    fits = [sorted(c for c in f if c < len(capacities)) for f in raw_fits]
    assigned = latest_class_matching(capacities, fits)
    for j, c in enumerate(assigned):
        assert c is None or c in fits[j]
    for c, capacity in enumerate(capacities):
        assert assigned.count(c) <= capacity
    best = (0, 0)
    for choice in product(*[[None, *f] for f in fits]):
        if all(choice.count(c) <= cap for c, cap in enumerate(capacities)):
            used = [j for j, c in enumerate(choice) if c is not None]
            best = max(best, (len(used), sum(j + 1 for j in used)))
    used = [j for j, c in enumerate(assigned) if c is not None]
    assert (len(used), sum(j + 1 for j in used)) == best


@settings(max_examples=40, deadline=None)
@given(
    shape=st.tuples(st.integers(1, 7), st.integers(1, 7)),
    seed=st.integers(0, 2**32 - 1),
    zeros=st.floats(0.0, 0.9),
)
def test_weighted_assignment_agrees_with_scipy(
    shape: tuple[int, int], seed: int, zeros: float
) -> None:
    np = pytest.importorskip("numpy")
    optimize = pytest.importorskip("scipy.optimize")
    from openevals.rag._steps_assign import max_weight_pairs

    rng = np.random.default_rng(seed)
    weights = rng.choice([0.25, 0.5, 1.0, 1 / 3], size=shape) * (rng.random(shape) >= zeros)
    pairs = max_weight_pairs(weights.tolist())
    assert len({r for r, _ in pairs}) == len(pairs) == len({c for _, c in pairs})
    assert all(weights[r, c] > 0 for r, c in pairs)
    rows, cols = optimize.linear_sum_assignment(weights, maximize=True)
    assert sum(weights[r, c] for r, c in pairs) == pytest.approx(
        weights[rows, cols].sum(), abs=1e-9
    )
    assert max_weight_pairs(weights.tolist()) == pairs  # deterministic
