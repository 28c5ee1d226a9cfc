"""The run store on a real PostgreSQL server, started for the test (``make integration``).

The server's binaries (``initdb``, ``pg_ctl``) come from ``OPENEVALS_PG_BIN``, ``PATH``, or
Debian's ``/usr/lib/postgresql/*/bin`` (``make integration-store`` installs them when missing). As root, the server runs as the
``postgres`` user (PostgreSQL refuses to run as root).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openevals import evaluate, exact_match, load_run
from openevals.store import RunStore

pytestmark = pytest.mark.integration

psycopg = pytest.importorskip("psycopg")


def _bin(name: str) -> str | None:
    folder = os.environ.get("OPENEVALS_PG_BIN")
    if folder:
        return str(Path(folder) / name)
    debian = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return shutil.which(name) or (debian[-1] if debian else None)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    initdb, pg_ctl = _bin("initdb"), _bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl) on PATH or OPENEVALS_PG_BIN")
    # Not under pytest's temporary folder: the server's user must be able to reach it.
    root = Path(tempfile.mkdtemp(prefix="openevals-pg-"))
    data = root / "data"
    prefix: list[str] = []
    if os.geteuid() == 0:
        os.chmod(root, 0o777)
        prefix = ["runuser", "-u", "postgres", "--"]
    port = _free_port()
    subprocess.run(
        [*prefix, initdb, "-D", str(data), "--auth=trust", "-U", "openevals"],
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -c listen_addresses=127.0.0.1 -k {root}"
    subprocess.run(
        [*prefix, pg_ctl, "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "start"],
        check=True,
        capture_output=True,
    )
    url = f"postgresql://openevals@127.0.0.1:{port}/postgres"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                psycopg.connect(url).close()
                break
            except psycopg.OperationalError:
                assert time.monotonic() < deadline, (root / "log").read_text()
                time.sleep(0.2)
        yield url
    finally:
        subprocess.run([*prefix, pg_ctl, "-D", str(data), "-m", "fast", "stop"], check=False)
        shutil.rmtree(root, ignore_errors=True)


def _rows(n: int) -> list[dict[str, Any]]:
    return [
        {"id": f"r{i}", "outputs": "a" if i % 4 else "b", "reference_outputs": "a"}
        for i in range(n)
    ]


def test_the_store_on_postgres(pg_url: str) -> None:
    live = evaluate(_rows(40), [exact_match], progress=False, store=pg_url)
    run_id = live.summary["run_id"]
    with RunStore(pg_url) as store:
        assert store.run("latest").id == run_id
        store.tag(run_id, "main")
        assert [r.id for r in store.runs(tag="main")] == [run_id]
        assert store.count(run_id, key="exact_match", below=0) == 10
        assert store.count(run_id, search="R1") == 11  # ILIKE: r1, r10..r19
        assert [r["pos"] for r in store.rows(run_id, offset=5, limit=3)] == [5, 6, 7]
        store.add_label(run_id, "r3", labeller="ann", value=False, reason="no")
        assert [lab.value for lab in store.labels(run_id)] == [False]
        incomplete = store.begin(kind="run", name="killed")
        assert incomplete not in [r.id for r in store.runs()]
    again = load_run(run_id, store=pg_url)
    assert again.aggregates == live.aggregates
    assert list(again.rows) == list(live.rows)


def test_two_writers_on_postgres(pg_url: str) -> None:
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            evaluate(_rows(n), [exact_match], progress=False, store=pg_url)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in (7000, 6000)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    with RunStore(pg_url) as store:
        for run in store.runs()[:2]:
            assert store.count(run.id) == run.rows
        assert sorted(r.rows for r in store.runs()[:2]) == [6000, 7000]


def test_columnar_chunks_on_postgres(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from openevals import levenshtein_distance
    from openevals.evaluation import store as row_store

    monkeypatch.setattr(row_store, "SPILL_AFTER", 1500)  # blocks kept as columns, spilled
    rows = [
        {"inputs": {"q": i}, "outputs": "Zebra" if i == 2000 else str(i % 3), "cat": "x"}
        for i in range(3000)
    ]
    for row in rows:
        row["reference_outputs"] = "1"
    live = evaluate(
        rows, [exact_match, levenshtein_distance], progress=False, store=pg_url, group_by="cat"
    )
    run_id = live.summary["run_id"]
    with RunStore(pg_url) as store:
        assert list(store.iter_rows(run_id)) == list(live.rows)
        assert [r["pos"] for r in store.rows(run_id, search="zEBRA")] == [2000]
        assert store.count(run_id, key="exact_match", above=1) == 1000
        assert store.position(run_id, live.rows[2999]["id"]) == 2999
        assert [r["pos"] for r in store.rows(run_id, offset=1022, limit=3)] == [1022, 1023, 1024]
