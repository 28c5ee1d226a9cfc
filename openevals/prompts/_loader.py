"""Read prebuilt judge prompts from their plain-text files.

The texts live in the repository's top-level ``prompts/`` folder. A built wheel carries a copy inside
the package at ``openevals/_prompt_files/`` (see ``[tool.hatch.build.targets.wheel.force-include]``
in ``pyproject.toml``); source checkouts and editable installs have no such copy and read the
top-level folder directly.

Lookups use ``os.path`` so that importing the prompt constants stays cheap (``importlib.resources``
alone costs more to import than reading all prompt files); ``importlib.resources`` is used only as a
last resort, for a package imported from a zip archive.
"""

from __future__ import annotations

import functools
import os

from openevals._repr import PATH_LIMIT, show

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PACKAGED_DIR_NAME = "_prompt_files"


def packaged_prompts_dir() -> str:
    """Where an installed wheel keeps its copy of the prompt files (``openevals/_prompt_files``)."""
    return os.path.join(_PACKAGE_DIR, _PACKAGED_DIR_NAME)


def repository_prompts_dir() -> str:
    """The top-level ``prompts/`` folder of a source checkout (absent from an installed wheel)."""
    return os.path.join(os.path.dirname(_PACKAGE_DIR), "prompts")


def _validated_parts(relative_path: object) -> list[str]:
    if not isinstance(relative_path, str):
        raise TypeError(
            "load_prompt: `relative_path` must be a str such as 'quality/correctness.txt'; "
            f"got {type(relative_path).__name__}"
        )
    parts = relative_path.split("/")
    if (
        "\\" in relative_path
        or ":" in relative_path
        or any(part in ("", ".", "..") for part in parts)
    ):
        raise ValueError(
            "load_prompt: `relative_path` must be a relative path with '/' separators inside the "
            "prompts folder, such as 'quality/correctness.txt'; got "
            f"{show(relative_path, PATH_LIMIT)}"
        )
    return parts


def prompt_file(relative_path: str) -> str:
    """Filesystem path of ``prompts/<relative_path>``: the packaged copy first, then the repository.

    Raises ``FileNotFoundError`` naming both places when neither has the file.
    """
    parts = _validated_parts(relative_path)
    packaged = os.path.join(packaged_prompts_dir(), *parts)
    if os.path.isfile(packaged):
        return packaged
    in_repository = os.path.join(repository_prompts_dir(), *parts)
    if os.path.isfile(in_repository):
        return in_repository
    raise FileNotFoundError(
        f"prompt file {show(relative_path, PATH_LIMIT)} not found: looked in the packaged copy "
        f"({packaged}) and in the repository's prompts folder ({in_repository}). Reinstall "
        "openevals from a built wheel, or check the file name."
    )


def _read_from_resources(parts: list[str]) -> str | None:
    """Read through ``importlib.resources`` (covers zip imports); ``None`` when absent."""
    from importlib import resources

    try:
        node = resources.files("openevals").joinpath(_PACKAGED_DIR_NAME, *parts)
        if node.is_file():
            return node.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None
    return None


@functools.cache
def load_prompt(relative_path: str) -> str:
    """Return the UTF-8 text of ``prompts/<relative_path>`` (cached per path)."""
    try:
        path = prompt_file(relative_path)
    except FileNotFoundError:
        text = _read_from_resources(_validated_parts(relative_path))
        if text is None:
            raise
        return text
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def prompt_names(namespace: dict[str, object]) -> list[str]:
    """The ``__all__`` of a prompt module: the sorted upper-case names of its ``globals()`` that
    are bound to a text."""
    return sorted(
        name for name, value in namespace.items() if name.isupper() and isinstance(value, str)
    )
