"""Structured-output evaluators: compare a dict (or a list of dicts) with a reference."""

from __future__ import annotations

from openevals.json.match import create_async_json_match_evaluator, create_json_match_evaluator

__all__ = ["create_async_json_match_evaluator", "create_json_match_evaluator"]
