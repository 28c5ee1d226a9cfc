"""Assemble README.md from docs/header.md and the per-feature sections in docs/sections/.

python scripts/build_readme.py          # rewrite README.md
python scripts/build_readme.py --check  # exit 1 if README.md is stale
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ROOT / "docs" / "sections"

# (file, wrapper heading or None, heading shift)
LAYOUT: list[tuple[str, str | None, int]] = [
    ("llm.md", "# Evaluators", 0),
    ("prompts.md", None, 0),
    ("json.md", None, 0),
    ("code.md", None, 0),
    ("trajectory.md", "## Agent trajectory", 0),
    ("string.md", None, 0),
    ("embeddings.md", None, 0),
    ("rag_retrieval.md", "## RAG and retrieval", 0),
    ("rag_llm.md", None, 1),
    ("simulators.md", "# Multiturn simulation and batch runs", 0),
    ("batch.md", None, 0),
    ("langsmith.md", "# Integrations and performance", 0),
    ("benchmarks.md", None, 0),
    ("compatibility.md", None, 0),
    ("testing.md", "# Contributing", 0),
]


def _shift(text: str, by: int) -> str:
    if not by:
        return text
    out, fenced = [], False
    for line in text.splitlines():
        if line.startswith(("```", "~~~")):
            fenced = not fenced
        if not fenced and re.match(r"^#{1,5} ", line):
            line = "#" * by + line
        out.append(line)
    return "\n".join(out)


def build() -> str:
    parts = [(ROOT / "docs" / "header.md").read_text().rstrip()]
    for name, wrapper, shift in LAYOUT:
        path = SECTIONS / name
        if not path.exists():
            continue
        if wrapper:
            parts.append(wrapper)
        parts.append(_shift(path.read_text().strip(), shift))
    return "\n\n".join(parts) + "\n"


def main() -> int:
    text = build()
    readme = ROOT / "README.md"
    if "--check" in sys.argv:
        if readme.read_text() != text:
            print("README.md is stale: run python scripts/build_readme.py")
            return 1
        return 0
    readme.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
