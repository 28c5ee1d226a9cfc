"""Checks the ``openevals`` command makes before a run, and its messages for what fails in one.

Every error of the command is one line on stderr with exit status 2 (see :mod:`openevals.cli`):
a ``--cache`` file that is not SQLite is refused before any model call, a ``--json`` report path
gets its missing folders like ``--output`` and ``--report`` do, and data nested too deeply to
read is reported with its file and line instead of a ``RecursionError`` traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

_SQLITE_HEADER = b"SQLite format 3\x00"
_SCAN_LIMIT = 1 << 30  # bytes of a data file scanned to find a deeply nested line


class CheckError(Exception):
    """A command-line argument that cannot work (the CLI turns it into a usage error)."""


def check_cache_file(cache: Any, option: str = "--cache") -> None:
    """Refuse a ``--cache FILE`` that exists but is not an SQLite database (or is a folder).

    A missing or empty file is fine: the cache creates it. ``True`` (``--cache`` without FILE)
    and None are not checked.
    """
    if not isinstance(cache, str):
        return
    path = Path(cache).expanduser()
    if path.is_dir():
        raise CheckError(f"{option} {cache}: is a folder; give the cache a file name")
    if not path.exists():
        return
    try:
        with path.open("rb") as handle:
            header = handle.read(len(_SQLITE_HEADER))
    except OSError as exc:
        raise CheckError(f"{option} {cache}: cannot be read ({exc.strerror or exc})") from None
    if header and header != _SQLITE_HEADER:
        raise CheckError(
            f"{option} {cache}: is not an SQLite database, so it cannot be the judge cache; give "
            "a new file name (the cache creates it) or a cache file openevals wrote"
        )


def prepare_output_file(path: str | None, option: str) -> None:
    """Create the missing folders of an output ``path`` (as ``--output``/``--report`` do);
    refuse a path that is a folder or lies below a file, before anything runs."""
    if not path:
        return
    target = Path(path).expanduser()
    if target.is_dir():
        raise CheckError(f"{option} {path}: is a folder; give a file name")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise CheckError(
            f"{option} {path}: cannot create its folder {target.parent} (a file is in the way)"
        ) from None
    except OSError as exc:
        raise CheckError(f"{option} {path}: cannot create its folder ({exc.strerror})") from None


def _deepest_line(path: Path, limit: int) -> tuple[int, int] | None:
    """``(line number, depth)`` of the first line of ``path`` whose JSON brackets nest deeper
    than ``limit`` (strings skipped), or None. Reads at most ``_SCAN_LIMIT`` bytes."""
    depth = 0
    in_string = escaped = False
    line = 1
    read = 0
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        while read < _SCAN_LIMIT:
            chunk = handle.read(1 << 20)
            if not chunk:
                return None
            read += len(chunk)
            for char in chunk:
                if in_string:
                    if escaped:
                        escaped = False
                    elif char == "\\":
                        escaped = True
                    elif char == '"':
                        in_string = False
                elif char == '"':
                    in_string = True
                elif char in "[{":
                    depth += 1
                    if depth > limit:
                        return line, depth
                elif char in "]}":
                    depth = max(depth - 1, 0)
                elif char == "\n":
                    line += 1
                    if path.suffix.lower() == ".jsonl":
                        depth = 0  # each line is its own document
    return None


def deep_data_message(data: str) -> str:
    """The one-line message for a ``RecursionError`` met while reading ``data``."""
    limit = sys.getrecursionlimit()
    where = f"{data}: "
    try:
        found = _deepest_line(Path(data), limit // 2)
    except OSError:
        found = None
    if found is not None:
        where = f"{data}, line {found[0]}: "
    return (
        f"{where}holds a JSON value nested too deeply to read (Python's JSON reader stops near "
        f"{limit:,} levels); flatten it, or store the deep part as a string"
    )


def one_line(message: str) -> str:
    """``message`` on one line (an error message may quote text that holds line breaks)."""
    return " ".join(part.strip() for part in message.splitlines() if part.strip())
