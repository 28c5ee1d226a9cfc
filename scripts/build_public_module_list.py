"""List every public module path of an installed ``openevals`` and the public names each defines.

Run it with the interpreter that has the public release installed (not this repository's)::

    /work/main/.venv-baseline/bin/python scripts/build_public_module_list.py \
        --output tests/compat/public_modules_0_2_2.json

A module is public when no part of its dotted path starts with ``_``; folders of modules without an
``__init__.py`` (namespace packages) count too. A module's public names (``names`` in the JSON)
are those, not starting with ``_``, that it binds at top level and that are its own API:

* functions, classes and assignments it defines (``defined``);
* names a package ``__init__`` imports from inside the package (``reexported``, e.g.
  ``from .quality import CORRECTNESS_PROMPT``): re-exporting is what such a file is for;
* everything its ``__all__`` lists (private names included).

Names a plain module imports from elsewhere in the package for its own use (``SimpleEvaluator`` in
``openevals.code.mypy``) are recorded apart, under ``incidental_imports``, and are not API. Names it
imports from outside the package (``typing.Any``, ``langsmith.traceable``) and submodules are left
recorded too, under ``other_importable`` with the private names a module binds (``defined``
or the dotted source it imports them from): a dependent can import any of them, and agentevals
does (``from openevals.llm import ChatCompletionMessage, Optional``).

Names are read from the source (``ast``) so that modules whose optional dependencies are missing
(the E2B ones) are still listed; every module that does import is checked against the live module,
and a name the source binds but the live module lacks (a ``TYPE_CHECKING``-only import) is dropped.
The kind of each name (``function``, ``class``, ``str``, ``other``) comes from the live object when
there is one, else from the source (for a re-export, from where it is defined).

Standard library only; prints the JSON when no ``--output`` is given.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.metadata
import inspect
import json
import os
import sys
from collections.abc import Iterator
from typing import Any

DEFAULT_PACKAGE = "openevals"


def _module_paths(package_dir: str) -> Iterator[tuple[str, str | None]]:
    """Yield ``(dotted path, source file or None)`` for every public module and package folder.

    Folders without ``__init__.py`` that hold modules are namespace packages; they count too.
    """
    root = os.path.dirname(package_dir)
    for folder, subfolders, files in os.walk(package_dir):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        relative = os.path.relpath(folder, root).split(os.sep)
        if any(part.startswith("_") for part in relative):
            subfolders[:] = []
            continue
        sources = sorted(f for f in files if f.endswith(".py"))
        if not sources:
            continue
        init = os.path.join(folder, "__init__.py")
        yield ".".join(relative), init if os.path.isfile(init) else None
        for name in sources:
            if name != "__init__.py" and not name.startswith("_"):
                yield ".".join([*relative, name[:-3]]), os.path.join(folder, name)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """Absolute module name of ``from <node.module> import ...`` written inside ``module``."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements that run at import time, descending into ``if``/``try``/``with`` blocks."""
    for node in body:
        if isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _top_level(node.body)
            yield from _top_level(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _top_level(block)
            for handler in node.handlers:
                yield from _top_level(handler.body)
        elif isinstance(node, ast.With):
            yield from _top_level(node.body)
        else:
            yield node


def _target_names(target: ast.expr) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _target_names(element)


def _source_kind(node: ast.stmt) -> str:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return "function"
    if isinstance(node, ast.ClassDef):
        return "class"
    value = getattr(node, "value", None)
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return "str"
    return "other"


def _scan_source(package: str, module: str, path: str, is_package: bool) -> dict[str, Any]:
    """Names bound at top level, by origin: defined here, imported from the package, or external."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), filename=path)
    defined: dict[str, str] = {}
    internal_imports: dict[str, str] = {}
    external: dict[str, str] = {}
    declared_all: list[str] | None = None
    for node in _top_level(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined[node.name] = _source_kind(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in _target_names(target):
                    if name == "__all__" and node.value is not None:
                        declared_all = list(ast.literal_eval(node.value))
                    defined[name] = _source_kind(node)
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, is_package, node)
            inside = source == package or source.startswith(package + ".")
            for alias in node.names:
                bound = alias.asname or alias.name
                if inside:
                    internal_imports[bound] = f"{source}.{alias.name}"
                else:
                    external[bound] = f"{source}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                external[bound] = alias.name if alias.asname else bound
    return {
        "defined": defined,
        "internal_imports": internal_imports,
        "external": external,
        "all": declared_all,
    }


def _live_kind(value: object) -> str:
    if inspect.isclass(value):
        return "class"
    if inspect.isfunction(value) or inspect.isbuiltin(value):
        return "function"
    if isinstance(value, str):
        return "str"
    return "other"


_EMPTY_SCAN: dict[str, Any] = {
    "defined": {},
    "internal_imports": {},
    "external": {},
    "all": None,
}


def _describe(package: str, module: str, path: str | None) -> dict[str, Any]:
    is_package = path is None or os.path.basename(path) == "__init__.py"
    scan = _scan_source(package, module, path, is_package) if path is not None else _EMPTY_SCAN
    try:
        live: Any = importlib.import_module(module)
        import_error = None
    except ImportError as exc:  # an optional dependency of the release is missing here
        live = None
        import_error = f"{type(exc).__name__}: {exc}"

    declared_all = scan["all"]
    if declared_all is None and live is not None:
        declared_all = getattr(live, "__all__", None)
    listed = set(declared_all or ())

    names: dict[str, dict[str, str]] = {}
    incidental: dict[str, str] = {}
    candidates = [(n, "defined", k, None) for n, k in scan["defined"].items()]
    candidates += [(n, "reexported", "other", s) for n, s in scan["internal_imports"].items()]
    for name, origin, kind, source in candidates:
        if name.startswith("_") and name not in listed:
            continue
        if live is not None:
            if not hasattr(live, name):
                continue  # bound only under TYPE_CHECKING, or deleted again
            value = getattr(live, name)
            if inspect.ismodule(value):
                continue
            kind = _live_kind(value)
        if origin == "reexported" and not is_package and name not in listed:
            incidental[name] = source
            continue
        entry = {"origin": origin, "kind": kind}
        if source is not None:
            entry["from"] = source
        names[name] = entry
    for name in listed - set(names):
        value = getattr(live, name, None) if live is not None else None
        names[name] = {"origin": "__all__", "kind": _live_kind(value)}
    other: dict[str, str] = {}
    bound = [*scan["internal_imports"].items(), *scan["external"].items()]
    bound += [(name, "defined") for name in scan["defined"]]
    for name, source in bound:
        if name in names or name in incidental or name.startswith("__"):
            continue
        if live is not None and (not hasattr(live, name) or inspect.ismodule(getattr(live, name))):
            continue
        other[name] = source
    return {
        "file": None
        if path is None
        else "/".join(module.split(".")) + ("/__init__.py" if is_package else ".py"),
        "namespace_package": path is None,
        "imported": import_error is None,
        "import_error": import_error,
        "all": sorted(declared_all) if declared_all is not None else None,
        "names": dict(sorted(names.items())),
        "incidental_imports": dict(sorted(incidental.items())),
        "other_importable": dict(sorted(other.items())),
    }


def _fill_reexport_kinds(modules: dict[str, dict[str, Any]]) -> None:
    """Give re-exports in modules that did not import the kind recorded where they come from."""
    for entry in modules.values():
        if entry["imported"]:
            continue
        for info in entry["names"].values():
            if info["kind"] != "other" or "from" not in info:
                continue
            source, _, name = info["from"].rpartition(".")
            origin = modules.get(source, {}).get("names", {}).get(name)
            if origin is not None:
                info["kind"] = origin["kind"]


def build(package: str = DEFAULT_PACKAGE) -> dict[str, Any]:
    """The module list of the importable ``package``, as the JSON document (a dict)."""
    root = importlib.import_module(package)
    package_dir = os.path.dirname(os.path.abspath(root.__file__ or ""))
    try:
        version: str | None = importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        version = None
    modules = {name: _describe(package, name, path) for name, path in _module_paths(package_dir)}
    _fill_reexport_kinds(modules)
    return {
        "package": package,
        "version": version,
        "generated_by": "scripts/build_public_module_list.py",
        "python": ".".join(map(str, sys.version_info[:2])),
        "module_count": len(modules),
        "name_count": sum(len(m["names"]) for m in modules.values()),
        "modules": dict(sorted(modules.items())),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", help="write the JSON here instead of printing it")
    parser.add_argument("--package", default=DEFAULT_PACKAGE, help="top-level package to walk")
    parser.add_argument(
        "--expect-version",
        default="0.2.2",
        help="fail unless the installed package has this version (default 0.2.2; '' for any)",
    )
    args = parser.parse_args(argv)
    data = build(args.package)
    if args.expect_version and data["version"] != args.expect_version:
        print(
            f"expected {args.package} {args.expect_version}, found {data['version']} "
            f"({sys.executable}); run this with the baseline venv's python",
            file=sys.stderr,
        )
        return 1
    text = json.dumps(data, indent=2, sort_keys=False) + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(text)
        print(
            f"{data['module_count']} modules, {data['name_count']} names -> {args.output}",
            file=sys.stderr,
        )
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
