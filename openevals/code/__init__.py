"""Evaluators for generated code: type checking (mypy, pyright), sandboxed runs (E2B), LLM judges."""
