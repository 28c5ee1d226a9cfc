"""The built wheel carries every prompt file and the installed copy reads them from inside itself.

Builds the wheel (hatchling, offline), installs it with ``pip --no-deps --target`` into a temporary
folder, and imports every constant in a fresh interpreter that sees only the standard library and
that folder (``python -S`` with ``PYTHONPATH``), so neither the repository nor the editable install
can supply the files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.prompts.test_prompts import ALL_SPEC, EXTRA_SPEC, PAIRWISE, PROMPTS_DIR, REPO, SPEC

# 0.2.2's per-prompt module paths, from the compatibility list.
_COMPAT_LIST = REPO / "tests" / "compat" / "public_modules_0_2_2.json"
PROMPT_MODULES = sorted(
    m
    for m in json.loads(_COMPAT_LIST.read_text(encoding="utf-8"))["modules"]
    if m.startswith("openevals.prompts.") and m.count(".") == 3
)
# openevals.prompts.json also exposes the rubric prompts under 0.2.2's names.
ALIASES = {"SYSTEM_PROMPT": "JSON_MATCH_SYSTEM_PROMPT", "USER_PROMPT": "JSON_MATCH_USER_PROMPT"}

pytestmark = pytest.mark.slow

_CHILD = r"""
import importlib, json, sys
import openevals
import openevals.prompts as prompts
from openevals.prompts import _loader, code, json as json_prompts

texts = {name: getattr(prompts, name) for name in prompts.__all__}
for module in (code, json_prompts):
    texts.update({name: getattr(module, name) for name in module.__all__})
# The 0.2.2 module paths (openevals.prompts.<family>.<name>), given on the command line.
per_module = {}
for path in sys.argv[1:]:
    module = importlib.import_module(path)
    per_module[path] = {name: getattr(module, name) for name in module.__all__}
print(json.dumps({
    "openevals_file": openevals.__file__,
    "loader_file": _loader.__file__,
    "all": list(prompts.__all__),
    "texts": texts,
    "per_module": per_module,
    "packaged_dir": _loader.packaged_prompts_dir(),
    "repository_dir": _loader.repository_prompts_dir(),
    "resolved": {
        "quality/correctness.txt": _loader.prompt_file("quality/correctness.txt"),
        "json/rubric_user.txt": _loader.prompt_file("json/rubric_user.txt"),
    },
    "modules": sorted(m for m in sys.modules if m.startswith(("openevals", "langchain", "openai"))),
}))
"""


def _run(
    cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=cwd, env=env)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(wheel file, install folder) for a wheel built from the current tree."""
    root = tmp_path_factory.mktemp("wheel")
    dist = root / "dist"
    build = _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(REPO)])
    if build.returncode != 0:
        # Without a reachable package index the isolated build cannot fetch hatchling; use the
        # current environment's copy if it has one.
        no_isolation = [sys.executable, "-m", "build", "--wheel", "--no-isolation"]
        retry = _run([*no_isolation, "--outdir", str(dist), str(REPO)])
        assert retry.returncode == 0, build.stdout + build.stderr + retry.stdout + retry.stderr
    wheels = sorted(dist.glob("openevals_suite-*.whl"))
    assert len(wheels) == 1, wheels
    site = root / "site"
    pip_install = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet"]
    pip = _run([*pip_install, "--target", str(site), str(wheels[0])])
    assert pip.returncode == 0, pip.stdout + pip.stderr
    return wheels[0], site


def test_wheel_contains_every_prompt_file(installed: tuple[Path, Path]) -> None:
    wheel, _ = installed
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    for family, stem, _ in ALL_SPEC.values():
        assert f"openevals/_prompt_files/{family}/{stem}.txt" in names
    assert "openevals/prompts/_loader.py" in names
    assert not any(name.startswith("prompts/") for name in names)


def test_installed_copy_reads_its_packaged_files(installed: tuple[Path, Path]) -> None:
    _, site = installed
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(site)
    child = _run([sys.executable, "-S", "-c", _CHILD, *PROMPT_MODULES], cwd=site.parent, env=env)
    assert child.returncode == 0, child.stderr
    report = json.loads(child.stdout)

    package = site / "openevals"
    assert Path(report["openevals_file"]).resolve().is_relative_to(package.resolve())
    assert Path(report["loader_file"]).resolve().is_relative_to(package.resolve())
    packaged = Path(report["packaged_dir"])
    assert packaged.resolve() == (package / "_prompt_files").resolve()
    # The repository fallback does not exist next to an installed copy, and every lookup
    # resolved inside the installed package.
    assert not Path(report["repository_dir"]).exists()
    for relative, resolved in report["resolved"].items():
        assert Path(resolved).resolve() == (packaged / relative).resolve()

    assert sorted(report["all"]) == sorted(SPEC)
    assert set(report["texts"]) == set(SPEC) | set(EXTRA_SPEC) | set(ALIASES)
    for name, (family, stem, _) in ALL_SPEC.items():
        expected = (PROMPTS_DIR / family / f"{stem}.txt").read_text(encoding="utf-8")
        assert report["texts"][name] == expected, name
    for alias, name in ALIASES.items():
        assert report["texts"][alias] == report["texts"][name]
    # Every 0.2.2 per-prompt module path imports from the installed copy, with its file's text.
    assert len(report["per_module"]) == len(PROMPT_MODULES) == 31
    seen = set()
    for path, constants in report["per_module"].items():
        family = path.split(".")[2]
        for name, text in constants.items():
            assert ALL_SPEC[name][0] == family, (path, name)
            assert text == report["texts"][name], (path, name)
            seen.add(name)
    # The pairwise and graph-trajectory prompts are new: no 0.2.2 module paths.
    assert seen == set(SPEC) - PAIRWISE - {"GRAPH_TRAJECTORY_ACCURACY_PROMPT", "RUBRIC_PROMPT"}
    # Reading prompts pulled in no model stack.
    assert not [m for m in report["modules"] if m.startswith(("langchain", "openai"))]


_REPORT_CHILD = r"""
import json
from openevals.report import html as report
from openevals.evaluation.result import EvaluationResult

result = EvaluationResult(rows=[], aggregates={}, summary={"pairs": {}}, evaluators=["e<1>"])
audit = report.ReportSection(
    kind="audit",
    values={"rows": 2, "alpha": 0.05, "min_effect": 0.1, "confidence": 95, "tests": [],
            "notes": ["wheel <note>"]},
    template=("openevals.audit", "audit.html.j2"),
)
page = report.render_report(result, title="wheel <check>", sections=[audit])
print(json.dumps({"report_file": report.__file__, "page": page}))
"""


def test_wheel_ships_the_report_template(installed: tuple[Path, Path]) -> None:
    wheel, site = installed
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    for name in ("report.html.j2", "report.css", "report.js", "macros.j2"):
        assert f"openevals/report/templates/{name}" in names
    # Each report section's own template ships with its owner package.
    for owner, name in [
        ("calibration", "calibration.html.j2"),
        ("pairwise", "pairwise.html.j2"),
        ("trust", "trials.html.j2"),
        ("audit", "audit.html.j2"),
    ]:
        assert f"openevals/{owner}/templates/{name}" in names
    # The installed copy renders from its own template (the repository is not on the path).
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(site)
    child = _run([sys.executable, "-c", _REPORT_CHILD], cwd=site.parent, env=env)
    assert child.returncode == 0, child.stderr
    out = json.loads(child.stdout)
    assert Path(out["report_file"]).resolve().is_relative_to((site / "openevals").resolve())
    assert out["page"].startswith("<!DOCTYPE html>")
    assert "<title>wheel &lt;check&gt;</title>" in out["page"]
    assert "evaluators: e&lt;1&gt;" in out["page"]
    assert "<h2>Judge audit</h2>" in out["page"] and "wheel &lt;note&gt;" in out["page"]
