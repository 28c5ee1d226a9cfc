"""What the E2B evaluators need to know before touching a sandbox.

* :func:`third_party_requirements` reads the code with :mod:`ast` (in this process; the code is not
  run) and lists the third-party modules it imports with the pip distribution that provides each
  (``yaml`` -> ``PyYAML``, ``sklearn`` -> ``scikit-learn``, ...).
* :data:`E2B_MISSING` is the message of the ImportError raised when ``e2b-code-interpreter`` is not
  installed.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass

E2B_MISSING = (
    "the E2B evaluators need the `e2b-code-interpreter` package; install it with "
    '`pip install "openevals-suite[e2b]"`'
)


def require_e2b() -> None:
    """Raise the install hint when the E2B SDK is missing (called when an E2B module loads)."""
    try:
        import e2b  # noqa: F401
    except ImportError as exc:
        raise ImportError(E2B_MISSING) from exc


IMPORT_TO_DISTRIBUTION: dict[str, str] = {
    "Bio": "biopython",
    "Crypto": "pycryptodome",
    "MySQLdb": "mysqlclient",
    "OpenSSL": "pyOpenSSL",
    "PIL": "Pillow",
    "attr": "attrs",
    "bs4": "beautifulsoup4",
    "cv2": "opencv-python",
    "dateutil": "python-dateutil",
    "dns": "dnspython",
    "docx": "python-docx",
    "dotenv": "python-dotenv",
    "faiss": "faiss-cpu",
    "fitz": "PyMuPDF",
    "git": "GitPython",
    "google.genai": "google-genai",
    "google.generativeai": "google-generativeai",
    "google.protobuf": "protobuf",
    "jose": "python-jose",
    "jwt": "PyJWT",
    "magic": "python-magic",
    "multipart": "python-multipart",
    "pptx": "python-pptx",
    "psycopg2": "psycopg2-binary",
    "serial": "pyserial",
    "skimage": "scikit-image",
    "sklearn": "scikit-learn",
    "slugify": "python-slugify",
    "telegram": "python-telegram-bot",
    "usb": "pyusb",
    "websocket": "websocket-client",
    "yaml": "PyYAML",
    "zmq": "pyzmq",
}
"""Import names whose pip distribution has another name. Dotted keys match that package prefix."""

_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


@dataclass(frozen=True)
class Requirement:
    """A module the code imports (the name to look up) and the distribution that provides it."""

    module: str
    distribution: str


def _catches_import_errors(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    for kind in kinds:
        name = kind.attr if isinstance(kind, ast.Attribute) else getattr(kind, "id", None)
        if name in _IMPORT_ERRORS:
            return True
    return False


class _ImportCollector(ast.NodeVisitor):
    """Absolute imports outside ``try`` blocks that handle ImportError (optional imports)."""

    def __init__(self) -> None:
        self.modules: list[str] = []
        self._optional_depth = 0

    def visit_Try(self, node: ast.Try) -> None:
        optional = any(_catches_import_errors(h) for h in node.handlers)
        self._optional_depth += optional
        for statement in node.body:
            self.visit(statement)
        self._optional_depth -= optional
        for part in (node.handlers, node.orelse, node.finalbody):
            for child in part:
                self.visit(child)

    visit_TryStar = visit_Try

    def visit_Import(self, node: ast.Import) -> None:
        if not self._optional_depth:
            self.modules.extend(alias.name for alias in node.names)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if not self._optional_depth and node.level == 0 and node.module:
            self.modules.append(node.module)


def distribution_for(module: str) -> Requirement:
    """The requirement for an imported (possibly dotted) module name."""
    parts = module.split(".")
    for size in range(len(parts), 1, -1):
        prefix = ".".join(parts[:size])
        if prefix in IMPORT_TO_DISTRIBUTION:
            return Requirement(prefix, IMPORT_TO_DISTRIBUTION[prefix])
    if parts[0] == "google" and len(parts) >= 3 and parts[1] == "cloud":
        prefix = ".".join(parts[:3])
        return Requirement(prefix, "google-cloud-" + parts[2].replace("_", "-"))
    top = parts[0]
    return Requirement(top, IMPORT_TO_DISTRIBUTION.get(top, top))


def third_party_requirements(code: str) -> list[Requirement]:
    """The third-party modules ``code`` imports, in order of first import, without duplicates.

    Skipped: standard-library modules (``sys.stdlib_module_names``), relative imports, imports
    inside ``try`` blocks that catch ImportError (optional dependencies). Code that does not parse
    needs nothing (running or checking it will report the syntax error).
    """
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    collector = _ImportCollector()
    collector.visit(tree)
    third_party = [m for m in collector.modules if m.split(".")[0] not in sys.stdlib_module_names]
    # A module name always maps to the same distribution: equal requirements are duplicates.
    return list(dict.fromkeys(map(distribution_for, third_party)))
