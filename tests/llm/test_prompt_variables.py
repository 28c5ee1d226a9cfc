"""A prompt variable that looks like a misspelt standard field (issue 40, item 4)."""

from __future__ import annotations

import warnings

import pytest

from openevals.llm import create_llm_as_judge


def test_a_misspelt_standard_variable_warns_at_creation_with_the_fix() -> None:
    with pytest.warns(UserWarning, match=r"\{output\}.*did you mean `\{outputs\}`"):
        create_llm_as_judge(prompt="Is {output} right for {inputs}?", model="openai:gpt-4o-mini")
    with pytest.warns(UserWarning, match=r"did you mean `\{reference_outputs\}`"):
        create_llm_as_judge(prompt="{outputs} vs {reference}", model="openai:gpt-4o-mini")


def test_extra_variables_stay_valid_and_silent() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        create_llm_as_judge(prompt="{outputs} given {context}", model="openai:gpt-4o-mini")
        create_llm_as_judge(prompt="{output_a} or {output_b}?", model="openai:gpt-4o-mini")


def test_the_call_time_error_suggests_the_standard_field() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        judge = create_llm_as_judge(prompt="Is {answer} right?", model="openai:gpt-4o-mini")
    with pytest.raises(ValueError, match=r"did you mean `\{outputs\}` for `\{answer\}`"):
        judge(outputs="yes")
