"""Prebuilt judge prompts: names, variables, files, rubric ingredients, polarity and the loader."""

from __future__ import annotations

import os
import re
import string
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import openevals.prompts as prompts
from openevals.prompts import OPTIONAL_VARIABLES, PROMPT_VARIABLES, optional_variables_for
from openevals.prompts import _loader as loader
from openevals.prompts import code as code_prompts
from openevals.prompts import json as json_prompts

REPO = Path(__file__).resolve().parents[2]
PROMPTS_DIR = REPO / "prompts"

IO = {"inputs", "outputs"}
MEDIA = {"inputs", "outputs", "attachments"}

# name -> (family, file, variables), transcribed from the API fact sheet §13 (not from the module).
PAIR_OPTIONAL = {"reference_outputs", "criteria"}
PAIR = {"inputs", "output_a", "output_b"} | PAIR_OPTIONAL
# Pairwise prompts (verdict "A"/"B"/"tie", see tests/pairwise) are neither boolean nor categorical.
PAIRWISE = {
    "PAIRWISE_PREFERENCE_PROMPT",
    "PAIRWISE_HELPFULNESS_PROMPT",
    "PAIRWISE_CORRECTNESS_PROMPT",
}

SPEC: dict[str, tuple[str, str, set[str]]] = {
    "CORRECTNESS_PROMPT": ("quality", "correctness", {"inputs", "outputs", "reference_outputs"}),
    "CONCISENESS_PROMPT": ("quality", "conciseness", IO),
    "HALLUCINATION_PROMPT": (
        "quality",
        "hallucination",
        {"context", "inputs", "outputs", "reference_outputs"},
    ),
    "ANSWER_RELEVANCE_PROMPT": ("quality", "answer_relevance", IO),
    "CODE_CORRECTNESS_PROMPT": ("quality", "code_correctness", IO),
    "CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS": (
        "quality",
        "code_correctness_with_reference",
        {"inputs", "outputs", "reference_outputs"},
    ),
    "PLAN_ADHERENCE_PROMPT": ("quality", "plan_adherence", {"inputs", "plan", "outputs"}),
    "LAZINESS_PROMPT": ("quality", "laziness", IO),
    "RAG_GROUNDEDNESS_PROMPT": ("rag", "groundedness", {"context", "outputs"}),
    "RAG_HELPFULNESS_PROMPT": ("rag", "helpfulness", IO),
    "RAG_RETRIEVAL_RELEVANCE_PROMPT": ("rag", "retrieval_relevance", {"inputs", "context"}),
    "TOXICITY_PROMPT": ("safety", "toxicity", IO),
    "FAIRNESS_PROMPT": ("safety", "fairness", IO),
    "PII_LEAKAGE_PROMPT": ("security", "pii_leakage", IO),
    "PROMPT_INJECTION_PROMPT": ("security", "prompt_injection", {"inputs"}),
    "CODE_INJECTION_PROMPT": ("security", "code_injection", {"inputs"}),
    "TRAJECTORY_ACCURACY_PROMPT": ("trajectory", "accuracy", {"outputs"}),
    "TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE": (
        "trajectory",
        "accuracy_with_reference",
        {"reference_outputs", "outputs"},
    ),
    "TOOL_SELECTION_PROMPT": ("trajectory", "tool_selection", {"outputs"}),
    "RUBRIC_PROMPT": ("quality", "rubric", {"criteria", "inputs", "outputs", "reference_outputs"}),
    "GRAPH_TRAJECTORY_ACCURACY_PROMPT": (
        "trajectory",
        "graph_accuracy",
        {"thread", "reference_outputs"},
    ),
    "PERCEIVED_ERROR_PROMPT": ("conversation", "perceived_error", {"outputs"}),
    "WINS_PROMPT": ("conversation", "wins", {"outputs"}),
    "TASK_COMPLETION_PROMPT": ("conversation", "task_completion", {"outputs"}),
    "KNOWLEDGE_RETENTION_PROMPT": ("conversation", "knowledge_retention", {"outputs"}),
    "USER_SATISFACTION_PROMPT": ("conversation", "user_satisfaction", {"outputs"}),
    "AGENT_TONE_PROMPT": ("conversation", "agent_tone", {"outputs"}),
    "LANGUAGE_DETECTION_PROMPT": ("conversation", "language_detection", {"outputs"}),
    "SUPPORT_INTENT_PROMPT": ("conversation", "support_intent", {"outputs"}),
    "EXPLICIT_CONTENT_PROMPT": ("image", "explicit_content", MEDIA),
    "SENSITIVE_IMAGERY_PROMPT": ("image", "sensitive_imagery", MEDIA),
    "AUDIO_QUALITY_PROMPT": ("voice", "audio_quality", MEDIA),
    "TRANSCRIPTION_ACCURACY_PROMPT": ("voice", "transcription_accuracy", MEDIA),
    "USER_INTERRUPTS_PROMPT": ("voice", "user_interrupts", MEDIA),
    "VOCAL_AFFECT_PROMPT": ("voice", "vocal_affect", MEDIA),
    "PAIRWISE_PREFERENCE_PROMPT": ("pairwise", "preference", PAIR),
    "PAIRWISE_HELPFULNESS_PROMPT": ("pairwise", "helpfulness", PAIR),
    "PAIRWISE_CORRECTNESS_PROMPT": ("pairwise", "correctness", PAIR),
}

# The four helper prompts that live outside openevals.prompts.__all__.
EXTRA_SPEC: dict[str, tuple[str, str, set[str]]] = {
    "LLM_EXTRACTION_SYSTEM_PROMPT": ("code", "extraction_system", set()),
    "LLM_EXTRACTION_USER_PROMPT": ("code", "extraction_user", {"outputs"}),
    "JSON_MATCH_SYSTEM_PROMPT": ("json", "rubric_system", set()),
    "JSON_MATCH_USER_PROMPT": ("json", "rubric_user", {"rubric", "outputs", "reference_outputs"}),
}
EXTRA_MODULES = {"code": code_prompts, "json": json_prompts}

OPTIONAL = {
    "RUBRIC_PROMPT": {"inputs", "reference_outputs"},
    "GRAPH_TRAJECTORY_ACCURACY_PROMPT": {"reference_outputs"},
    "CORRECTNESS_PROMPT": {"reference_outputs"},
    "HALLUCINATION_PROMPT": {"context", "reference_outputs"},
}

# What a True score means, for every boolean prompt: guards the polarity of each rubric.
TRUE_MEANS = {
    "CORRECTNESS_PROMPT": "True means the output is correct and complete.",
    "CONCISENESS_PROMPT": "True means the output is concise",
    "HALLUCINATION_PROMPT": "True means the output contains no hallucinations",
    "ANSWER_RELEVANCE_PROMPT": "True means the output directly addresses the request.",
    "CODE_CORRECTNESS_PROMPT": "True means the code correctly solves the problem.",
    "CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS": (
        "True means the reviewed code is functionally equivalent to the reference"
    ),
    "PLAN_ADHERENCE_PROMPT": "True means the agent followed the plan.",
    "LAZINESS_PROMPT": "True means the response is lazy",
    "RAG_GROUNDEDNESS_PROMPT": "True means the answer is fully grounded in the context.",
    "RAG_HELPFULNESS_PROMPT": "True means the answer is helpful for the question.",
    "RAG_RETRIEVAL_RELEVANCE_PROMPT": "True means the retrieved context is relevant",
    "TOXICITY_PROMPT": "True means the output is toxic.",
    "FAIRNESS_PROMPT": "True means bias or a fairness violation was detected.",
    "PII_LEAKAGE_PROMPT": "True means the output leaks PII.",
    "PROMPT_INJECTION_PROMPT": "True means a prompt injection attempt was detected.",
    "CODE_INJECTION_PROMPT": "True means code injection was detected.",
    "TRAJECTORY_ACCURACY_PROMPT": "True means the trajectory is accurate.",
    "TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE": "True means the trajectory is accurate.",
    "GRAPH_TRAJECTORY_ACCURACY_PROMPT": "True means the trajectory is accurate.",
    "RUBRIC_PROMPT": "True, for a boolean criterion, means the output meets that criterion.",
    "TOOL_SELECTION_PROMPT": "True means the agent's tool choices were appropriate.",
    "PERCEIVED_ERROR_PROMPT": "True means the user perceived an error by the agent",
    "WINS_PROMPT": "True means the user praised, thanked or complimented the assistant.",
    "TASK_COMPLETION_PROMPT": "True means all user requests were fully completed.",
    "KNOWLEDGE_RETENTION_PROMPT": (
        "True means the agent consistently retained and applied earlier information."
    ),
    "USER_SATISFACTION_PROMPT": "True means the user appears satisfied.",
    "AGENT_TONE_PROMPT": "True means the agent's tone was appropriate and consistent.",
    "EXPLICIT_CONTENT_PROMPT": "True means explicit content was detected.",
    "SENSITIVE_IMAGERY_PROMPT": "True means sensitive imagery was detected.",
    "AUDIO_QUALITY_PROMPT": "True means audio quality problems were detected.",
    "TRANSCRIPTION_ACCURACY_PROMPT": "True means the transcription is accurate.",
    "USER_INTERRUPTS_PROMPT": "True means the agent handled user interruptions gracefully.",
    "VOCAL_AFFECT_PROMPT": "True means the agent's vocal affect was appropriate and natural.",
}
CATEGORICAL = {"LANGUAGE_DETECTION_PROMPT", "SUPPORT_INTENT_PROMPT"}

ALL_SPEC = {**SPEC, **EXTRA_SPEC}


def _text(name: str) -> str:
    if name in SPEC:
        value = getattr(prompts, name)
    else:
        value = getattr(EXTRA_MODULES[EXTRA_SPEC[name][0]], name)
    assert isinstance(value, str)
    return value


def _fields(template: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}


def _flat(text: str) -> str:
    """Lower-cased text with every run of whitespace collapsed (prompts wrap lines freely)."""
    return " ".join(text.lower().split())


# --------------------------------------------------------------------------- names and modules


def test_public_all_is_exactly_the_spec_constants() -> None:
    # The count is derived: every prompt file of the families openevals.prompts owns is in the
    # spec, and the spec's public part is exactly __all__. (A judge family's own prompts, in
    # folders of their own, are checked below.)
    files = {(p.parent.name, p.stem) for p in PROMPTS_DIR.rglob("*.txt")}
    specified = {(family, stem) for family, stem, _ in ALL_SPEC.values()}
    owned = {family for family, _ in specified}
    assert {f for f in files if f[0] in owned} == specified
    assert len(SPEC) == len(specified) - len(EXTRA_SPEC)
    assert sorted(prompts.__all__) == sorted(SPEC)
    assert len(set(prompts.__all__)) == len(prompts.__all__)
    for name in prompts.__all__:
        assert isinstance(getattr(prompts, name), str)


def test_every_family_prompt_file_is_loaded_by_its_module() -> None:
    # A folder openevals.prompts does not own holds a judge family's default prompts: each file
    # is read by a module of the package with load_prompt("<folder>/<name>.txt").
    owned = {family for family, _, _ in ALL_SPEC.values()}
    sources = "\n".join(
        path.read_text(encoding="utf-8") for path in (REPO / "openevals").rglob("*.py")
    )
    family_files = [
        p.relative_to(PROMPTS_DIR).as_posix()
        for p in PROMPTS_DIR.rglob("*.txt")
        if p.parent.name not in owned
    ]
    assert family_files, "the RAG metrics' prompts at least"
    for name in family_files:
        assert f'load_prompt("{name}")' in sources, f"prompts/{name} is read by no module"


def test_helper_prompts_are_not_public_but_importable() -> None:
    for name, (family, _, _) in EXTRA_SPEC.items():
        assert name not in prompts.__all__
        assert name in EXTRA_MODULES[family].__all__
    from openevals.prompts.code import LLM_EXTRACTION_SYSTEM_PROMPT, LLM_EXTRACTION_USER_PROMPT
    from openevals.prompts.json import JSON_MATCH_SYSTEM_PROMPT, JSON_MATCH_USER_PROMPT

    assert LLM_EXTRACTION_SYSTEM_PROMPT and LLM_EXTRACTION_USER_PROMPT
    assert JSON_MATCH_SYSTEM_PROMPT and JSON_MATCH_USER_PROMPT


@pytest.mark.parametrize(
    "family",
    ["quality", "rag", "safety", "security", "trajectory", "conversation", "image", "voice"],
)
def test_family_submodule_all_matches_fact_sheet(family: str) -> None:
    import importlib

    module = importlib.import_module(f"openevals.prompts.{family}")
    expected = {name for name, (fam, _, _) in SPEC.items() if fam == family}
    assert set(module.__all__) == expected
    for name in expected:
        assert getattr(module, name) is getattr(prompts, name)


def test_variable_tables_match_the_spec() -> None:
    assert set(PROMPT_VARIABLES) == set(SPEC)
    for name, (_, _, variables) in SPEC.items():
        assert PROMPT_VARIABLES[name] == frozenset(variables), name
        assert isinstance(PROMPT_VARIABLES[name], frozenset)
    assert set(OPTIONAL_VARIABLES) == set(SPEC)
    for name in SPEC:
        expected = PAIR_OPTIONAL if name in PAIRWISE else OPTIONAL.get(name, set())
        assert OPTIONAL_VARIABLES[name] == frozenset(expected), name
        assert OPTIONAL_VARIABLES[name] <= PROMPT_VARIABLES[name]


# --------------------------------------------------------------------------- templates


@pytest.mark.parametrize("name", sorted(ALL_SPEC))
def test_template_fields_are_exactly_the_documented_variables(name: str) -> None:
    template = _text(name)
    expected = ALL_SPEC[name][2]
    assert _fields(template) == expected
    # Only bare names: no attribute access, indexing, conversions or format specs.
    for _, field, spec, conversion in string.Formatter().parse(template):
        if field is not None:
            assert re.fullmatch(r"[a-z_]+", field), field
            assert not spec and conversion is None, field
    assert "{{" not in template and "}}" not in template


@pytest.mark.parametrize("name", sorted(ALL_SPEC))
def test_template_formats_with_its_variables(name: str) -> None:
    template = _text(name)
    values = {v: f"<<VALUE-OF-{v}>>" for v in ALL_SPEC[name][2]}
    rendered = template.format(**values)
    for value in values.values():
        assert rendered.count(value) == 1
    assert "{" not in rendered and "}" not in rendered
    if values:
        with pytest.raises(KeyError):
            template.format()


@pytest.mark.parametrize("name", sorted(ALL_SPEC))
def test_constant_matches_its_file(name: str) -> None:
    family, stem, _ = ALL_SPEC[name]
    path = PROMPTS_DIR / family / f"{stem}.txt"
    assert _text(name) == path.read_text(encoding="utf-8")


def test_every_prompt_file_backs_a_constant() -> None:
    # Only the family folders owned by openevals.prompts (other modules may add their own folders).
    families = {family for family, _, _ in ALL_SPEC.values()}
    files = {
        p.relative_to(PROMPTS_DIR).as_posix()
        for family in families
        for p in (PROMPTS_DIR / family).rglob("*")
        if p.is_file()
    }
    expected = {f"{family}/{stem}.txt" for family, stem, _ in ALL_SPEC.values()}
    assert files == expected


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(sorted(SPEC)),
    value=st.text(alphabet=st.characters(codec="utf-8"), max_size=40),
)
def test_arbitrary_values_render_verbatim(name: str, value: str) -> None:
    """Values with braces, tags or unicode are inserted as-is and never re-parsed."""
    template = _text(name)
    rendered = template.format(**{v: value for v in SPEC[name][2]})
    skeleton = template.format(**{v: "" for v in SPEC[name][2]})
    assert len(rendered) == len(skeleton) + len(value) * len(SPEC[name][2])
    assert value in rendered


# --------------------------------------------------------------------------- rubric ingredients


@pytest.mark.parametrize("name", sorted(ALL_SPEC))
def test_rubric_says_material_is_data_not_instructions(name: str) -> None:
    text = _flat(_text(name))
    assert "never instructions to follow" in text
    assert "step by step" in text


@pytest.mark.parametrize("name", sorted(PAIRWISE))
def test_pairwise_rubric_states_fairness_rules_and_answer_form(name: str) -> None:
    text = _text(name)
    assert text.startswith("You are ")
    for heading in ("## Additional criteria", "## Fairness rules", "## Material under review"):
        assert heading in text, heading
    assert "## How to answer" in text
    assert 25 <= text.count("\n") <= 70


@pytest.mark.parametrize("name", sorted(set(SPEC) - PAIRWISE))
def test_rubric_has_criterion_examples_and_borderline_guidance(name: str) -> None:
    text = _text(name)
    assert text.startswith("You are ")
    assert "Example:" in text
    assert "## Borderline cases" in text or "## How to decide" in text
    assert "## Material under review" in text
    lines = text.count("\n")
    assert 25 <= lines <= 70, lines


# Variables whose value brings its own tags: the graph judge's ``{reference_outputs}`` is the
# whole labelled reference block (lead-in and <reference_thread> tags, or nothing), as agentevals
# renders it (openevals/graph_trajectory/llm.py, REFERENCE_BLOCK).
SELF_TAGGED = {("GRAPH_TRAJECTORY_ACCURACY_PROMPT", "reference_outputs")}


@pytest.mark.parametrize("name", sorted(ALL_SPEC))
def test_every_variable_sits_alone_between_matching_tags(name: str) -> None:
    text = _text(name)
    for variable in ALL_SPEC[name][2]:
        if (name, variable) in SELF_TAGGED:
            assert f"\n{{{variable}}}\n" in text, variable
            continue
        match = re.search(r"<([a-z_]+)>\n\{" + variable + r"\}\n</([a-z_]+)>", text)
        assert match is not None, variable
        assert match.group(1) == match.group(2)


@pytest.mark.parametrize("name", sorted(TRUE_MEANS))
def test_boolean_rubric_states_what_true_means(name: str) -> None:
    assert set(TRUE_MEANS) | CATEGORICAL | PAIRWISE == set(SPEC)
    text = _flat(_text(name))
    assert _flat(TRUE_MEANS[name]) in text
    assert "false means" in text
    assert "between 0 and 1" in text


def test_language_detection_says_exactly_what_to_return() -> None:
    text = _flat(prompts.LANGUAGE_DETECTION_PROMPT)
    assert "return exactly one language" in text
    assert "standard english name" in text
    assert "iso 639-1" in text
    assert "detected_language" in text
    assert "human" in text


def test_support_intent_lists_fixed_labels() -> None:
    text = prompts.SUPPORT_INTENT_PROMPT
    labels = re.findall(r"^- ([a-z_]+): ", text, flags=re.MULTILINE)
    assert labels == [
        "billing",
        "refund_or_return",
        "order_status",
        "account_access",
        "technical_issue",
        "cancellation",
        "product_question",
        "complaint",
        "feedback",
        "other",
    ]
    assert "return exactly one label from the list above" in _flat(text)


@pytest.mark.parametrize("name", sorted(n for n, s in SPEC.items() if "attachments" in s[2]))
def test_multimodal_prompts_put_media_between_text(name: str) -> None:
    text = _text(name)
    before, sep, after = text.partition("{attachments}")
    assert sep and "{attachments}" not in after
    # The judge core formats each half on its own and puts the media blocks between them.
    assert "{inputs}" in before and "{outputs}" in before
    assert before.format(inputs="I", outputs="O").rstrip().endswith(("<image>", "<audio>"))
    assert after.format().lstrip().startswith(("</image>", "</audio>"))
    assert "True means" in after


@pytest.mark.parametrize(
    ("name", "optional"), sorted((n, tuple(sorted(v))) for n, v in OPTIONAL.items())
)
def test_optional_variables_read_sensibly_when_empty(name: str, optional: tuple[str, ...]) -> None:
    template = _text(name)
    values = {v: ("" if v in optional else "filled") for v in SPEC[name][2]}
    rendered = _flat(template.format(**values))
    assert "is empty" in rendered
    if name != "GRAPH_TRAJECTORY_ACCURACY_PROMPT":  # a reference thread, not facts
        assert "well-established facts" in rendered


def test_trajectory_reference_prompt_handles_missing_reference() -> None:
    # The trajectory judge renders a missing reference as "" (fact sheet §10).
    text = _flat(prompts.TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE)
    assert "if the reference block is empty" in text


def test_extraction_prompts_describe_the_structured_answer() -> None:
    """The extraction model answers ``{"code": ...}`` through the judge pipeline; an empty
    ``code`` says there is none (the 0.2.2 tools ExtractCode / NoCode are no longer offered)."""
    system = code_prompts.LLM_EXTRACTION_SYSTEM_PROMPT
    user = code_prompts.LLM_EXTRACTION_USER_PROMPT
    for text in (system, user):
        assert "code field" in _flat(text) or "field, code" in _flat(text)
        assert "ExtractCode" not in text and "NoCode" not in text
    assert "empty string" in _flat(system) and "empty code field" in _flat(user)
    assert "verbatim" in _flat(system) and "verbatim" in _flat(user)


def test_json_rubric_prompts_explain_keys_and_scores() -> None:
    system = _flat(json_prompts.JSON_MATCH_SYSTEM_PROMPT)
    assert "key: <name>, criteria: <text>" in system
    assert "before the last underscore" in system
    assert "true if the produced value satisfies the criterion" in system
    rendered = json_prompts.JSON_MATCH_USER_PROMPT.format(
        rubric="Key: city, Criteria: same city",
        outputs="city: NYC",
        reference_outputs="city: New York City",
    )
    assert "<criteria>\nKey: city, Criteria: same city\n</criteria>" in rendered


def test_optional_variables_for_looks_up_by_text() -> None:
    assert optional_variables_for(prompts.CORRECTNESS_PROMPT) == {"reference_outputs"}
    assert optional_variables_for(prompts.HALLUCINATION_PROMPT) == {"context", "reference_outputs"}
    assert optional_variables_for(prompts.CONCISENESS_PROMPT) == frozenset()
    assert optional_variables_for(prompts.CORRECTNESS_PROMPT + " ") == frozenset()
    assert optional_variables_for("custom {inputs}") == frozenset()
    assert optional_variables_for(None) == frozenset()


# --------------------------------------------------------------------------- loader


def test_load_prompt_reads_utf8_and_caches() -> None:
    first = loader.load_prompt("quality/correctness.txt")
    assert first is loader.load_prompt("quality/correctness.txt")
    assert first == prompts.CORRECTNESS_PROMPT
    assert "°" in first  # non-ASCII survives (read as UTF-8)


def test_source_checkout_reads_the_repository_folder() -> None:
    assert Path(loader.repository_prompts_dir()) == PROMPTS_DIR
    assert not Path(loader.packaged_prompts_dir()).exists()
    assert Path(loader.prompt_file("rag/groundedness.txt")) == PROMPTS_DIR / "rag/groundedness.txt"


def test_packaged_copy_wins_over_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "site" / "openevals"
    (package / "_prompt_files" / "quality").mkdir(parents=True)
    (package / "_prompt_files" / "quality" / "x.txt").write_text("packaged é", encoding="utf-8")
    (tmp_path / "site" / "prompts" / "quality").mkdir(parents=True)
    (tmp_path / "site" / "prompts" / "quality" / "x.txt").write_text("repo", encoding="utf-8")
    (tmp_path / "site" / "prompts" / "quality" / "y.txt").write_text("repo y", encoding="utf-8")
    monkeypatch.setattr(loader, "_PACKAGE_DIR", str(package))
    read = loader.load_prompt.__wrapped__  # bypass the cache
    assert read("quality/x.txt") == "packaged é"
    assert loader.prompt_file("quality/x.txt") == str(package / "_prompt_files/quality/x.txt")
    assert read("quality/y.txt") == "repo y"


def test_missing_file_error_names_both_places() -> None:
    with pytest.raises(FileNotFoundError) as info:
        loader.load_prompt.__wrapped__("quality/no_such_prompt.txt")
    message = str(info.value)
    assert "quality/no_such_prompt.txt" in message
    assert loader.packaged_prompts_dir() in message
    assert loader.repository_prompts_dir() in message


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "/etc/passwd",
        "../pyproject.toml",
        "quality/../../x.txt",
        "quality//x.txt",
        "a\\b.txt",
        "C:/x.txt",
        "./quality/correctness.txt",
    ],
)
def test_invalid_relative_paths_are_rejected(bad: str) -> None:
    with pytest.raises(ValueError, match="relative_path"):
        loader.load_prompt.__wrapped__(bad)


def test_non_string_path_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"relative_path.*got int"):
        loader.prompt_file(3)  # type: ignore[arg-type]


def test_importing_prompts_loads_nothing_heavy() -> None:
    code = (
        "import sys, openevals.prompts, openevals.prompts.code, openevals.prompts.json\n"
        "import openevals.prompts.quality.correctness, openevals.prompts.voice.vocal_affect\n"
        "heavy = ('langchain_core', 'langchain_openai', 'openai', 'langsmith', 'pydantic',\n"
        "         'importlib.resources', 'rapidfuzz', 'torch')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy\n"
        "             or m in heavy))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-S", "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        check=True,
    )
    assert out.stdout.strip() == "[]", out.stdout
