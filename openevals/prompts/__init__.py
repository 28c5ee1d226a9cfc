"""Prebuilt judge prompts for ``create_llm_as_judge`` and friends.

Every constant is a plain ``str`` template for ``str.format`` (no escaped braces), read from the
plain-text files of the top-level ``prompts/`` folder (packaged as ``openevals/_prompt_files``).

``PROMPT_VARIABLES`` maps each constant's name to the template variables it contains;
``OPTIONAL_VARIABLES`` names those a caller may leave out (they are rendered as an empty string and
the text says how to judge without them). ``optional_variables_for(prompt)`` looks the optional
variables up by prompt text, for code that receives the template rather than its name.

Each family package (``openevals.prompts.quality``, ``.rag``, ``.conversation``, ...) reads its
texts from ``prompts/<family>/`` when it is imported, and each of its prompts also has its own
submodule, ``openevals.prompts.<family>.<name>`` (the module paths of openevals 0.2.2), which
re-exports the family's constant.

The code-extraction and JSON-rubric prompts live in :mod:`openevals.prompts.code` and
:mod:`openevals.prompts.json`; they are not part of ``__all__``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from openevals.prompts._loader import prompt_names

# Explicit re-exports (``name as name``) for type checkers; ``__all__`` is derived below.
# isort: off
from openevals.prompts.conversation import (
    AGENT_TONE_PROMPT as AGENT_TONE_PROMPT,
    KNOWLEDGE_RETENTION_PROMPT as KNOWLEDGE_RETENTION_PROMPT,
    LANGUAGE_DETECTION_PROMPT as LANGUAGE_DETECTION_PROMPT,
    PERCEIVED_ERROR_PROMPT as PERCEIVED_ERROR_PROMPT,
    SUPPORT_INTENT_PROMPT as SUPPORT_INTENT_PROMPT,
    TASK_COMPLETION_PROMPT as TASK_COMPLETION_PROMPT,
    USER_SATISFACTION_PROMPT as USER_SATISFACTION_PROMPT,
    WINS_PROMPT as WINS_PROMPT,
)
from openevals.prompts.image import (
    EXPLICIT_CONTENT_PROMPT as EXPLICIT_CONTENT_PROMPT,
    SENSITIVE_IMAGERY_PROMPT as SENSITIVE_IMAGERY_PROMPT,
)
from openevals.prompts.pairwise import (
    PAIRWISE_CORRECTNESS_PROMPT as PAIRWISE_CORRECTNESS_PROMPT,
    PAIRWISE_HELPFULNESS_PROMPT as PAIRWISE_HELPFULNESS_PROMPT,
    PAIRWISE_PREFERENCE_PROMPT as PAIRWISE_PREFERENCE_PROMPT,
)
from openevals.prompts.quality import (
    ANSWER_RELEVANCE_PROMPT as ANSWER_RELEVANCE_PROMPT,
    CODE_CORRECTNESS_PROMPT as CODE_CORRECTNESS_PROMPT,
    CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS as CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS,
    CONCISENESS_PROMPT as CONCISENESS_PROMPT,
    CORRECTNESS_PROMPT as CORRECTNESS_PROMPT,
    HALLUCINATION_PROMPT as HALLUCINATION_PROMPT,
    LAZINESS_PROMPT as LAZINESS_PROMPT,
    PLAN_ADHERENCE_PROMPT as PLAN_ADHERENCE_PROMPT,
    RUBRIC_PROMPT as RUBRIC_PROMPT,
)
from openevals.prompts.rag import (
    RAG_GROUNDEDNESS_PROMPT as RAG_GROUNDEDNESS_PROMPT,
    RAG_HELPFULNESS_PROMPT as RAG_HELPFULNESS_PROMPT,
    RAG_RETRIEVAL_RELEVANCE_PROMPT as RAG_RETRIEVAL_RELEVANCE_PROMPT,
)
from openevals.prompts.safety import (
    FAIRNESS_PROMPT as FAIRNESS_PROMPT,
    TOXICITY_PROMPT as TOXICITY_PROMPT,
)
from openevals.prompts.security import (
    CODE_INJECTION_PROMPT as CODE_INJECTION_PROMPT,
    PII_LEAKAGE_PROMPT as PII_LEAKAGE_PROMPT,
    PROMPT_INJECTION_PROMPT as PROMPT_INJECTION_PROMPT,
)
from openevals.prompts.trajectory import (
    GRAPH_TRAJECTORY_ACCURACY_PROMPT as GRAPH_TRAJECTORY_ACCURACY_PROMPT,
    TOOL_SELECTION_PROMPT as TOOL_SELECTION_PROMPT,
    TRAJECTORY_ACCURACY_PROMPT as TRAJECTORY_ACCURACY_PROMPT,
    TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE as TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE,
)
from openevals.prompts.voice import (
    AUDIO_QUALITY_PROMPT as AUDIO_QUALITY_PROMPT,
    TRANSCRIPTION_ACCURACY_PROMPT as TRANSCRIPTION_ACCURACY_PROMPT,
    USER_INTERRUPTS_PROMPT as USER_INTERRUPTS_PROMPT,
    VOCAL_AFFECT_PROMPT as VOCAL_AFFECT_PROMPT,
)
# isort: on


_IO = frozenset({"inputs", "outputs"})
_IO_REF = frozenset({"inputs", "outputs", "reference_outputs"})
_OUT = frozenset({"outputs"})
_MEDIA = frozenset({"inputs", "outputs", "attachments"})
_PAIR_OPTIONAL = frozenset({"reference_outputs", "criteria"})
_PAIR = frozenset({"inputs", "output_a", "output_b"}) | _PAIR_OPTIONAL

PROMPT_VARIABLES: Final[dict[str, frozenset[str]]] = {
    # quality
    "CORRECTNESS_PROMPT": _IO_REF,
    "CONCISENESS_PROMPT": _IO,
    "HALLUCINATION_PROMPT": frozenset({"context", "inputs", "outputs", "reference_outputs"}),
    "ANSWER_RELEVANCE_PROMPT": _IO,
    "CODE_CORRECTNESS_PROMPT": _IO,
    "CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS": _IO_REF,
    "PLAN_ADHERENCE_PROMPT": frozenset({"inputs", "plan", "outputs"}),
    "LAZINESS_PROMPT": _IO,
    "RUBRIC_PROMPT": frozenset({"criteria", "inputs", "outputs", "reference_outputs"}),
    # rag
    "RAG_GROUNDEDNESS_PROMPT": frozenset({"context", "outputs"}),
    "RAG_HELPFULNESS_PROMPT": _IO,
    "RAG_RETRIEVAL_RELEVANCE_PROMPT": frozenset({"inputs", "context"}),
    # safety
    "TOXICITY_PROMPT": _IO,
    "FAIRNESS_PROMPT": _IO,
    # security
    "PII_LEAKAGE_PROMPT": _IO,
    "PROMPT_INJECTION_PROMPT": frozenset({"inputs"}),
    "CODE_INJECTION_PROMPT": frozenset({"inputs"}),
    # trajectory
    "TRAJECTORY_ACCURACY_PROMPT": _OUT,
    "TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE": frozenset({"reference_outputs", "outputs"}),
    "TOOL_SELECTION_PROMPT": _OUT,
    "GRAPH_TRAJECTORY_ACCURACY_PROMPT": frozenset({"thread", "reference_outputs"}),
    # conversation
    "PERCEIVED_ERROR_PROMPT": _OUT,
    "WINS_PROMPT": _OUT,
    "TASK_COMPLETION_PROMPT": _OUT,
    "KNOWLEDGE_RETENTION_PROMPT": _OUT,
    "USER_SATISFACTION_PROMPT": _OUT,
    "AGENT_TONE_PROMPT": _OUT,
    "LANGUAGE_DETECTION_PROMPT": _OUT,
    "SUPPORT_INTENT_PROMPT": _OUT,
    # pairwise
    "PAIRWISE_PREFERENCE_PROMPT": _PAIR,
    "PAIRWISE_HELPFULNESS_PROMPT": _PAIR,
    "PAIRWISE_CORRECTNESS_PROMPT": _PAIR,
    # image
    "EXPLICIT_CONTENT_PROMPT": _MEDIA,
    "SENSITIVE_IMAGERY_PROMPT": _MEDIA,
    # voice
    "AUDIO_QUALITY_PROMPT": _MEDIA,
    "TRANSCRIPTION_ACCURACY_PROMPT": _MEDIA,
    "USER_INTERRUPTS_PROMPT": _MEDIA,
    "VOCAL_AFFECT_PROMPT": _MEDIA,
}
"""Constant name -> every ``{placeholder}`` in its template (required and optional)."""

_OPTIONAL: dict[str, frozenset[str]] = {
    "RUBRIC_PROMPT": frozenset({"inputs", "reference_outputs"}),
    "GRAPH_TRAJECTORY_ACCURACY_PROMPT": frozenset({"reference_outputs"}),
    "CORRECTNESS_PROMPT": frozenset({"reference_outputs"}),
    "HALLUCINATION_PROMPT": frozenset({"context", "reference_outputs"}),
    "PAIRWISE_PREFERENCE_PROMPT": _PAIR_OPTIONAL,
    "PAIRWISE_HELPFULNESS_PROMPT": _PAIR_OPTIONAL,
    "PAIRWISE_CORRECTNESS_PROMPT": _PAIR_OPTIONAL,
}

OPTIONAL_VARIABLES: Final[dict[str, frozenset[str]]] = {
    name: _OPTIONAL.get(name, frozenset()) for name in PROMPT_VARIABLES
}
"""Constant name -> the variables a caller may omit (rendered as ``""``); empty for most prompts."""

_OPTIONAL_BY_TEXT: Final[Mapping[str, frozenset[str]]] = MappingProxyType(
    {globals()[name]: OPTIONAL_VARIABLES[name] for name in PROMPT_VARIABLES}
)


def optional_variables_for(prompt: object) -> frozenset[str]:
    """Optional variables of ``prompt`` if it is one of the prebuilt templates, else empty.

    Matching is by exact text, so an edited copy of a prebuilt prompt has no optional variables.
    """
    if not isinstance(prompt, str):
        return frozenset()
    return _OPTIONAL_BY_TEXT.get(prompt, frozenset())


__all__ = prompt_names(globals())
