"""Runs documentation examples in the interpreter of an installed wheel (see
tests/test_docs_examples.py). Standalone on purpose: it is copied out of the repository and run from
a folder outside it, so it may import nothing but the standard library and the installed package.

Reads ``[{"id", "name", "code"}, ...]`` as JSON on stdin; prints one JSON object mapping each id
to ``{"printed", "error"}``. Each example runs with fresh globals in a fresh working directory,
against its own fake OpenAI server (``OPENAI_BASE_URL``) answering any structured request with a
minimal valid instance.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import json
import os
import sys
import tempfile
import traceback
import types


def _run(code: str, name: str) -> str:
    buffer = io.StringIO()
    compiled = compile(code, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    module = types.ModuleType("docs_example")
    sys.modules[module.__name__] = module
    try:
        with contextlib.redirect_stdout(buffer):
            result = eval(compiled, module.__dict__)
            if asyncio.iscoroutine(result):
                asyncio.run(result)
    finally:
        sys.modules.pop(module.__name__, None)
    return buffer.getvalue()


def main() -> None:
    from openevals.testing import FakeOpenAIServer, schema_responder

    examples = json.load(sys.stdin)
    results = {}
    home = os.getcwd()
    saved = dict(os.environ)
    for example in examples:
        printed, error = "", None
        with tempfile.TemporaryDirectory() as work, FakeOpenAIServer() as server:
            server.set_responder(schema_responder)
            os.environ.update(
                OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="test-key", HF_HUB_OFFLINE="1"
            )
            os.chdir(work)
            try:
                printed = _run(example["code"], example["name"])
            except BaseException:
                error = traceback.format_exc(limit=-8)
            finally:
                os.chdir(home)
                os.environ.clear()
                os.environ.update(saved)
        results[example["id"]] = {"printed": printed, "error": error}
    import openevals

    results["__openevals_file__"] = {"printed": openevals.__file__, "error": None}
    sys.stdout.write("\n" + json.dumps(results) + "\n")


if __name__ == "__main__":
    main()
