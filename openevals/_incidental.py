"""Names 0.2.2's modules bound only as a side effect of their own imports, kept importable.

``from openevals.llm import ChatCompletionMessage, Optional`` works on 0.2.2 because its
``openevals/llm.py`` imports those names for its own use, and dependents rely on it (agentevals
0.0.9 does exactly that). Each module listed below ends with ``__getattr__ = incidental(__name__)``
(PEP 562): a name it does not define itself is looked up in ``_TABLE`` (``"module:attribute"``,
``=name`` where 0.2.2 bound it under another name) and imported on first use, so none of these
imports cost anything at ``import openevals``. The table mirrors ``other_importable`` and
``incidental_imports`` of ``tests/compat/public_modules_0_2_2.json`` (generated from the 0.2.2
release by ``scripts/build_public_module_list.py``); ``tests/compat/test_incidental_names.py``
checks every name there is importable here or listed, with its reason, as not kept.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

# The two E2B evaluator modules of 0.2.2 import the same names.
_E2B = (
    "e2b_code_interpreter:AsyncSandbox "
    "langchain_core.language_models.chat_models:BaseChatModel "
    "e2b_code_interpreter:CommandExitException typing:Literal typing:Optional "
    "e2b_code_interpreter:Sandbox openevals.types:SimpleAsyncEvaluator "
    "openevals.types:SimpleEvaluator "
    "openevals.code.base:_create_async_base_code_evaluator "
    "openevals.code.base:_create_base_code_evaluator"
)

# So do its four deprecated trajectory evaluator modules, but for one or two names.
_DEPRECATED_TRAJECTORY = (
    "openevals.types:ChatCompletionMessage typing:Optional typing:TYPE_CHECKING "
    "openevals.types:ToolArgsMatchMode openevals.types:ToolArgsMatchOverrides typing:Union "
    "openevals.utils:_arun_evaluator openevals.utils:_run_evaluator warnings:warn "
    "openevals.trajectory.utils:_normalize_to_openai_messages_list "
)
_NOT_STRICT = (
    _DEPRECATED_TRAJECTORY + "typing:Any openevals.trajectory.utils:_is_trajectory_superset"
)

_TABLE: dict[str, str] = {
    "openevals.code.base": (
        "langchain_core.language_models.chat_models:BaseChatModel typing:Literal "
        "typing:Optional openevals.types:ScoreType openevals.types:SimpleAsyncEvaluator "
        "openevals.types:SimpleEvaluator typing_extensions:TypedDict typing:Union "
        "openevals.utils:_arun_evaluator "
        "openevals.utils:_normalize_final_app_outputs_as_string "
        "openevals.utils:_run_evaluator langchain.chat_models:init_chat_model"
    ),
    "openevals.code.e2b.execution": _E2B,
    "openevals.code.e2b.pyright": _E2B,
    "openevals.code.llm": (
        "langchain_core.language_models.chat_models:BaseChatModel "
        "openevals.types:ChatCompletionMessage typing:Literal typing:Optional "
        "langchain_core.runnables:Runnable openevals.types:SimpleAsyncEvaluator "
        "openevals.types:SimpleEvaluator typing:Union "
        "openevals.code.base:_create_async_base_code_evaluator "
        "openevals.llm:_create_async_llm_as_judge_scorer "
        "openevals.code.base:_create_base_code_evaluator "
        "openevals.llm:_create_llm_as_judge_scorer"
    ),
    "openevals.code.mypy": (
        "typing:Awaitable langchain_core.language_models.chat_models:BaseChatModel "
        "typing:Literal typing:Optional openevals.types:SimpleAsyncEvaluator "
        "openevals.types:SimpleEvaluator typing:Tuple typing:Union "
        "openevals.code.base:_create_async_base_code_evaluator "
        "openevals.code.base:_create_base_code_evaluator"
    ),
    "openevals.code.pyright": (
        "typing:Awaitable langchain_core.language_models.chat_models:BaseChatModel "
        "typing:Literal typing:Optional openevals.types:SimpleAsyncEvaluator "
        "openevals.types:SimpleEvaluator typing:Tuple typing:Union "
        "openevals.code.base:_create_async_base_code_evaluator "
        "openevals.code.base:_create_base_code_evaluator"
    ),
    "openevals.exact": (
        "openevals.types:EvaluatorResult openevals.utils:_arun_evaluator "
        "openevals.utils:_run_evaluator"
    ),
    "openevals.json.match": (
        "langchain_core.language_models.chat_models:BaseChatModel typing:Dict "
        "openevals.types:EvaluatorResult typing:Literal openevals.types:ModelClient "
        "typing:Optional openevals.types:SimpleAsyncEvaluator openevals.types:SimpleEvaluator "
        "typing:Union openevals.utils:_arun_evaluator "
        "openevals.llm:_create_async_llm_as_judge_scorer "
        "openevals.llm:_create_llm_as_judge_scorer openevals.utils:_run_evaluator "
        "langsmith:get_current_run_tree"
    ),
    "openevals.llm": (
        "typing:Awaitable langchain_core.language_models.chat_models:BaseChatModel "
        "langchain_core.language_models.chat_models:BaseMessage "
        "openevals.types:ChatCompletionMessage openevals.types:EvaluatorResult "
        "openevals.types:ModelClient typing:Optional langchain_core.runnables:Runnable "
        "openevals.types:ScoreType langchain_core.prompts.structured:StructuredPrompt "
        "typing:Union openevals.utils:_arun_evaluator_untyped "
        "openevals.utils:_attachment_to_content_block "
        "openevals.utils:_convert_to_openai_message openevals.utils:_normalize_content_blocks "
        "openevals.utils:_normalize_to_openai_messages_list "
        "openevals.utils:_run_evaluator_untyped langsmith:traceable"
    ),
    "openevals.simulators.multiturn": (
        "langchain_core.messages:BaseMessage langchain_core.messages:BaseMessageChunk "
        "typing:Literal openevals.types:Messages typing:Optional "
        "openevals.types:SimpleAsyncEvaluator openevals.types:SimpleEvaluator typing:Union "
        "openevals.utils:_convert_to_openai_message "
        "openevals.utils:_normalize_to_openai_messages_list langsmith:traceable"
    ),
    "openevals.simulators.prebuilts": (
        "langchain_core.language_models.chat_models:BaseChatModel "
        "openevals.types:ChatCompletionMessage typing:Optional typing:Union "
        "openevals.utils:_convert_to_openai_message langchain.chat_models:init_chat_model"
    ),
    "openevals.string.embedding_similarity": (
        "openevals.types:SimpleAsyncEvaluator openevals.types:SimpleEvaluator "
        "openevals.utils:_arun_evaluator openevals.utils:_run_evaluator "
        "langchain.embeddings:init_embeddings"
    ),
    "openevals.string.levenshtein": (
        "openevals.types:EvaluatorResult openevals.utils:_arun_evaluator "
        "openevals.utils:_run_evaluator"
    ),
    "openevals.trajectory.llm": (
        "langchain_core.language_models.chat_models:BaseChatModel typing:Callable "
        "openevals.types:ChatCompletionMessage openevals.types:ModelClient typing:Optional "
        "langchain_core.runnables:Runnable typing:TYPE_CHECKING typing:Union "
        "openevals.utils:_arun_evaluator openevals.utils:_chat_completion_messages_to_string "
        "openevals.llm:_create_async_llm_as_judge_scorer "
        "openevals.llm:_create_llm_as_judge_scorer "
        "openevals.trajectory.utils:_normalize_to_openai_messages_list "
        "openevals.utils:_run_evaluator"
    ),
    "openevals.trajectory.match": (
        "langchain_core.messages:BaseMessage openevals.types:ChatCompletionMessage "
        "typing:Literal typing:Optional openevals.types:SimpleAsyncEvaluator "
        "openevals.types:SimpleEvaluator typing:Union openevals.utils:_arun_evaluator "
        "openevals.trajectory.utils:_normalize_to_openai_messages_list "
        "openevals.utils:_run_evaluator "
        "openevals.trajectory.strict:_scorer=trajectory_strict_scorer "
        "openevals.trajectory.subset:_scorer=trajectory_subset_scorer "
        "openevals.trajectory.superset:_scorer=trajectory_superset_scorer "
        "openevals.trajectory.unordered:_scorer=trajectory_unordered_scorer"
    ),
    "openevals.trajectory.strict": (
        _DEPRECATED_TRAJECTORY + "openevals.trajectory.utils:_get_matcher_for_tool_name"
    ),
    "openevals.trajectory.subset": _NOT_STRICT,
    "openevals.trajectory.superset": _NOT_STRICT,
    "openevals.trajectory.unordered": _NOT_STRICT,
    "openevals.trajectory.utils": (
        "langchain_core.messages:BaseMessage openevals.types:ChatCompletionMessage "
        "typing:Optional typing:Union "
        "langchain_core.messages.utils:convert_to_openai_messages"
    ),
    "openevals.types": (
        "langchain_core.messages:BaseMessage langchain_core.messages:BaseMessageChunk "
        "typing:Optional"
    ),
    "openevals.utils": (
        "langchain_core.messages:BaseMessage openevals.types:ChatCompletionMessage "
        "langchain_core.messages:HumanMessage typing:Optional typing:Union "
        "langsmith.testing._internal:_TEST_CASE "
        "langchain_core.messages.utils:convert_to_openai_messages "
        "langsmith:get_current_run_tree langsmith:traceable"
    ),
}


def _entries(module: str) -> dict[str, tuple[str, str]]:
    entries: dict[str, tuple[str, str]] = {}
    for token in _TABLE.get(module, "").split():
        source, _, rest = token.partition(":")
        attribute, _, alias = rest.partition("=")
        entries[alias or attribute] = (source, attribute)
    return entries


def incidental(module: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` that serves ``module``'s 0.2.2 incidental names lazily."""
    entries = _entries(module)

    def __getattr__(name: str) -> Any:
        if name not in entries:
            raise AttributeError(f"module '{module}' has no attribute '{name}'")
        source, attribute = entries[name]
        return getattr(importlib.import_module(source), attribute)

    return __getattr__


def names(module: str) -> frozenset[str]:
    """The incidental names ``module`` serves (for tests and ``dir()``)."""
    return frozenset(_entries(module))
