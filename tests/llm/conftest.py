from tests.llm.judge_helpers import kind  # noqa: F401
