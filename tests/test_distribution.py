"""The distribution name, `openevals --version`, and the clash check (issue 40, item 5)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
import tomllib

import openevals
from openevals.cli import main

REPO = Path(__file__).resolve().parent.parent


def test_the_distribution_has_its_own_name_and_keeps_the_import_name() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == openevals.__distribution__ == "openevals-suite"
    assert project["version"] == openevals.__version__
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "pip install openevals-suite" in readme and "pip install openevals " not in readme
    for extra in project["optional-dependencies"]:
        if extra != "dev":
            assert f'"openevals-suite[{extra}]"' in readme, f"README lists the extra {extra}"


def test_version_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert (
        capsys.readouterr().out.strip()
        == f"openevals {openevals.__version__} (distribution openevals-suite)"
    )


def test_the_public_distribution_beside_this_one_is_named_with_the_repair(tmp_path: Path) -> None:
    package = tmp_path / "openevals"
    package.mkdir()
    (tmp_path / "openevals_suite-0.1.0.dist-info").mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        openevals._warn_if_public_alongside(str(package))  # ours alone: silent
    (tmp_path / "openevals-0.2.2.dist-info").mkdir()
    with pytest.warns(RuntimeWarning, match=r"openevals-0\.2\.2\.dist-info.*pip uninstall -y"):
        openevals._warn_if_public_alongside(str(package))
