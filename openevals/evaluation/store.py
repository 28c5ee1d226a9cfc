"""Where a batch run keeps its finished result rows: :class:`RowStore`, read as :class:`ResultRows`.

A run over a million rows cannot keep a million result dicts in memory. The store keeps rows in
*parts* of consecutive rows: a list of result dicts, or a block of columns from the runner's
columnar path (:class:`~openevals.evaluation.blocks.ColumnBlock`, turned into dicts only when read).
Once more than :data:`SPILL_AFTER` rows are held, further parts are pickled into an anonymous
temporary file (removed by the operating system when the store is gone) and read back when the
rows are. Rows that finish out of order (the per-row path: custom evaluators, judges, targets) are
put back in data order as they come, a row finished ahead of an earlier one waiting for it, and
kept in parts of :data:`LOOSE_PART` rows that spill the same way.
A block may hold rows whose content ids are not made yet (a run without an ``output=`` file does
not need them): :meth:`RowStore.settle` makes them in data order (:class:`~.data.RowIds` counts
repeated examples), before any later row is numbered and when the rows are read.

``EvaluationResult.rows`` is a plain list while every row fits in memory. A run that spilled
gets a :class:`ResultRows` instead: a read-only sequence of the result dicts in data order
(``len``, indexing, slices, iteration; equal to a list of the same dicts; ``list()`` it for a
list, or to give it to ``json``).
Only secret-free records reach the store (:mod:`.records` removes secrets first).
"""

from __future__ import annotations

import abc
import bisect
import os
import pickle
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, overload

from openevals.data.row_ids import RowIds
from openevals.evaluation.records import ResultRow

__all__ = ["SPILL_AFTER", "Part", "ResultRows", "RowStore"]

SPILL_AFTER = 32_768
"""Rows held in memory before further parts are moved to a temporary file."""

LOOSE_PART = 1_024
"""Rows of the per-row path kept together as one part (in data order)."""


class Part(Protocol):
    """Consecutive finished rows, in data order."""

    def __len__(self) -> int: ...

    def rows(self) -> list[ResultRow]: ...

    def settle(self, ids: RowIds) -> bool:
        """Give the rows without an id theirs (in order); whether there were any."""
        ...


class _Rows(list[ResultRow]):
    """A part that is already a list of result dicts."""

    def rows(self) -> list[ResultRow]:
        return self

    def settle(self, ids: RowIds) -> bool:
        return False


class _Spilled:
    """A part moved to the store's temporary file."""

    __slots__ = ("count", "length", "offset", "spill")

    def __init__(self, spill: _SpillFile, offset: int, length: int, count: int) -> None:
        self.spill, self.offset, self.length, self.count = spill, offset, length, count

    def __len__(self) -> int:
        return self.count

    def load(self) -> Part:
        part: Part = pickle.loads(self.spill.read(self.offset, self.length))
        return part

    def rows(self) -> list[ResultRow]:
        return self.load().rows()

    def settle(self, ids: RowIds) -> bool:
        raise TypeError("a spilled part is settled by its store")  # pragma: no cover


class _SpillFile:
    """An anonymous temporary file parts are appended to and read back from (``pread``)."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="openevals-rows-")  # noqa: SIM115 (lives with the store)
        self._end = 0
        self._lock = threading.Lock()

    def append(self, data: bytes) -> int:
        with self._lock:
            offset = self._end
            self._file.seek(offset)
            self._file.write(data)
            self._file.flush()
            self._end += len(data)
        return offset

    def read(self, offset: int, length: int) -> bytes:
        return os.pread(self._file.fileno(), length, offset)

    def __del__(self) -> None:
        self._file.close()


class RowStore:
    """The finished rows of one run (see the module docs)."""

    def __init__(self, *, spill_after: int | None = None) -> None:
        self.spill_after = SPILL_AFTER if spill_after is None else spill_after
        self._parts: list[Part | _Spilled] = []
        self._held = 0
        self._spill: _SpillFile | None = None
        # The per-row path: rows put back in data order as they finish, kept in parts of
        # LOOSE_PART rows (which spill like any other); rows ahead of a missing one wait.
        self._loose_parts: list[Part | _Spilled] = []
        self._loose: list[ResultRow] = []
        self._waiting: dict[int, ResultRow] = {}
        self._next = 0
        self.ids = RowIds()
        """The content ids of the run's source (its reader's), numbered in data order."""
        self._settled = 0  # parts whose rows all have their ids
        self._settling = threading.Lock()

    def add(self, rec: ResultRow) -> None:
        """One finished row, in any order (the per-row path)."""
        index = rec["index"]
        if index != self._next:
            self._waiting[index] = rec
            return
        loose = self._loose
        loose.append(rec)
        waiting = self._waiting
        index += 1
        while waiting:
            follower = waiting.pop(index, None)
            if follower is None:
                break
            loose.append(follower)
            index += 1
        self._next = index
        if len(loose) >= LOOSE_PART:
            self._keep(_Rows(loose), self._loose_parts)
            self._loose = []

    def add_part(self, part: Part) -> None:
        """The next rows in data order (the columnar path: a block, or a list of dicts)."""
        self._keep(part, self._parts)

    def _keep(self, part: Part, parts: list[Part | _Spilled]) -> None:
        """Append ``part`` to ``parts``, in memory or (past :attr:`spill_after` rows held) in
        the temporary file."""
        count = len(part)
        if not count:
            return
        if self._held + count <= self.spill_after:
            parts.append(part)
            self._held += count
            return
        parts.append(self._spilled(part, count))

    def settle(self, upto: int | None = None) -> None:
        """Number the rows without an id of the first ``upto`` parts (all by default), in
        order; a spilled part that needed it is written again with its ids."""
        self.settle_part(upto)

    def settle_part(self, upto: int | None = None) -> Part | None:
        """:meth:`settle`, returning the last of those parts when this call read it from the
        file (so a reader need not read it again), else ``None``."""
        last: Part | None = None
        with self._settling:
            parts = self._parts
            stop = len(parts) if upto is None else upto
            while self._settled < stop:
                number = self._settled
                part = parts[number]
                if not isinstance(part, _Spilled):
                    part.settle(self.ids)
                else:
                    loaded = part.load()
                    if loaded.settle(self.ids):
                        parts[number] = self._spilled(loaded, len(part))
                    if number == stop - 1:
                        last = loaded
                self._settled += 1
        return last

    def _spilled(self, part: Part, count: int) -> _Spilled:
        if self._spill is None:
            self._spill = _SpillFile()
        data = pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL)
        return _Spilled(self._spill, self._spill.append(data), len(data), count)

    def add_rows(self, rows: list[ResultRow]) -> None:
        """:meth:`add_part` for a list of result dicts."""
        self.add_part(_Rows(rows))

    def view(self) -> list[ResultRow] | ResultRows:
        """The rows finished so far, in data order: a list while they all fit in memory, else
        a :class:`ResultRows` reading the temporary file."""
        loose = [
            *self._loose_parts,
            _Rows(self._loose),
            _Rows(self._waiting[i] for i in sorted(self._waiting)),
        ]
        has_loose = any(len(part) for part in loose)
        if has_loose or not any(isinstance(part, _Spilled) for part in self._parts):
            self.settle()  # every row is built now (else spilled parts settle as they are read)
        parts: list[Part | _Spilled] = self._parts
        if has_loose:
            if parts:  # both paths fed this store: merge everything (small runs only)
                merged = [rec for part in (*parts, *loose) for rec in part.rows()]
                parts = [_Rows(sorted(merged, key=lambda r: r["index"]))]
            else:
                parts = [part for part in loose if len(part)]
        if not any(isinstance(part, _Spilled) for part in parts):
            return [rec for part in parts for rec in part.rows()]
        # The store's own list settles lazily; a list of loose parts is settled already.
        return ResultRows(parts, self.settle_part if parts is self._parts else None)

    def __len__(self) -> int:
        loose = sum(len(part) for part in self._loose_parts) + len(self._loose)
        return sum(len(part) for part in self._parts) + loose + len(self._waiting)


class IndexedRows(Sequence[ResultRow]):
    """Result rows looked up by position: the indexing (ints, negative ints, slices; the errors)
    of :class:`ResultRows` and of a stored run's rows, each of which gives :meth:`_row_at`."""

    __slots__ = ()
    _OWNER = "result"  # what the rows belong to, in the IndexError message

    @abc.abstractmethod
    def _row_at(self, index: int) -> ResultRow:
        """The row at ``index``, with ``0 <= index < len(self)``."""

    @overload
    def __getitem__(self, index: int) -> ResultRow: ...

    @overload
    def __getitem__(self, index: slice) -> list[ResultRow]: ...

    def __getitem__(self, index: int | slice) -> ResultRow | list[ResultRow]:
        count = len(self)
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(count))]
        if not isinstance(index, int):
            raise TypeError(f"result rows are indexed by int or slice; got {type(index).__name__}")
        if index < 0:
            index += count
        if not 0 <= index < count:
            raise IndexError(f"row {index} out of range (the {self._OWNER} has {count} rows)")
        return self._row_at(index)


class ResultRows(IndexedRows):
    """The result rows of a run, in data order (``EvaluationResult.rows``; see the module docs).

    Read-only. Rows kept in memory as columns are built into dicts once, on first read; rows in
    the temporary file are built on every read (the part read last is kept, so walking the rows
    in order builds each part once), so keep a row you mean to change.
    """

    __slots__ = ("_cache", "_lock", "_parts", "_settle", "_starts", "_total")

    def __init__(
        self, parts: list[Part | _Spilled], settle: Callable[[int], Part | None] | None = None
    ) -> None:
        # The store's own list when ``settle`` is given: settling may write a part again.
        self._parts = parts
        self._settle = settle
        self._starts: list[int] = []
        total = 0
        for part in self._parts:
            self._starts.append(total)
            total += len(part)
        self._total = total
        self._cache: tuple[int, list[ResultRow]] | None = None
        self._lock = threading.Lock()

    def iter_parts(self) -> Iterator[Part]:
        """The parts in order, each loaded when reached (for readers that use a block's columns
        directly, such as ``EvaluationResult.to_pandas``)."""
        for number in range(len(self._parts)):
            loaded = self._settle(number + 1) if self._settle is not None else None
            part = self._parts[number]
            if loaded is None:
                loaded = part.load() if isinstance(part, _Spilled) else part
            yield loaded

    def __len__(self) -> int:
        return self._total

    def _part_rows(self, number: int) -> list[ResultRow]:
        if self._settle is not None:
            self._settle(number + 1)
        part = self._parts[number]
        if not isinstance(part, _Spilled):
            if not isinstance(part, _Rows):  # built once and kept: the same dicts on every read
                part = _Rows(part.rows())
                self._parts[number] = part
            return part.rows()
        with self._lock:
            cached = self._cache
            if cached is not None and cached[0] == number:
                return cached[1]
        rows = part.rows()
        with self._lock:
            self._cache = (number, rows)
        return rows

    def _row_at(self, index: int) -> ResultRow:
        number = bisect.bisect_right(self._starts, index) - 1
        return self._part_rows(number)[index - self._starts[number]]

    def __iter__(self) -> Iterator[ResultRow]:
        for number in range(len(self._parts)):
            yield from self._part_rows(number)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (ResultRows, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        if self._total <= 20:
            return repr(list(self))
        return f"<ResultRows: {self._total} rows>"

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))
