"""``openevals view``: the local web app over a run store (Starlette; the ``viewer`` extra).

Pages: the runs (filters: dataset, evaluator, tag, commit), a run (aggregates with intervals,
histograms, groups, failures, its calibration / comparison / pairwise sections, the labellers'
agreement, and a row table searched, filtered and paged in the database), a row (every field and
evaluation, its labels and the form to label it), two runs compared (``compare``'s figures and
flips) and a key's trend across runs (regressions flagged by the paired test).

Safety: the only write is a label, a POST that must carry the CSRF token of its page (a
double-submitted ``SameSite=Strict`` cookie) and come from this origin; requests must name this
host (no DNS rebinding); with a ``token`` every request needs it (``?token=`` once sets a
cookie). Row values are redacted (:func:`.pages.pretty`) and escaped by Jinja2's autoescaping.
"""

from __future__ import annotations

import hmac
import itertools
import math
import secrets
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from openevals.evaluation.recordrun import rows_ready
from openevals.store.runs import RunStore
from openevals.viewer import pages

__all__ = ["create_app"]

_HERE = Path(__file__).resolve().parent
_CSRF_COOKIE, _TOKEN_COOKIE = "openevals_csrf", "openevals_token"


def _templates() -> Any:
    import jinja2

    from openevals.report.templating import environment

    return environment(jinja2.FileSystemLoader(str(_HERE / "templates")), strict=False)


def parse_label(text: str) -> Any:
    """A label typed in the form: pass/fail (true/false), a number, or a category name."""
    value = text.strip()
    lowered = value.lower()
    if lowered in ("pass", "true", "yes"):
        return True
    if lowered in ("fail", "false", "no"):
        return False
    try:
        number = float(value)
    except ValueError:
        return value
    if not math.isfinite(number):  # "nan", "inf": a category name, not a score
        return value
    return int(number) if number.is_integer() and "." not in value else number


def create_app(store: RunStore, *, token: str | None = None, hosts: tuple[str, ...] = ()) -> Any:
    """The viewer's ASGI app over ``store``.

    Args:
        store: the run store to show (and to write labels to).
        token: when set, every request must carry it (``?token=`` or its cookie).
        hosts: the host names requests may name (default: the loopback names).
    """
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    env = _templates()

    def render(request: Request, name: str, status: int = 200, **context: Any) -> Response:
        csrf = request.cookies.get(_CSRF_COOKIE) or secrets.token_urlsafe(24)
        html = env.get_template(name).render(csrf=csrf, location=store.location, **context)
        response = HTMLResponse(html, status_code=status)
        response.headers["Content-Security-Policy"] = (
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
            "frame-ancestors 'none'; form-action 'self'"
        )
        response.headers["X-Content-Type-Options"] = "nosniff"
        if request.cookies.get(_CSRF_COOKIE) != csrf:
            response.set_cookie(_CSRF_COOKIE, csrf, httponly=True, samesite="strict")
        return response

    def not_found(request: Request, message: str) -> Response:
        return render(request, "error.html", status=404, message=message)

    def runs_page(request: Request) -> Response:
        q = request.query_params
        filters: dict[str, Any] = {
            name: (q.get(name) or "").strip() or None
            for name in ("dataset", "evaluator", "tag", "commit")
        }
        runs = store.runs(**filters, limit=500)
        datasets = sorted({r.dataset for r in store.runs(limit=1000) if r.dataset})
        return render(request, "runs.html", runs=runs, filters=filters, datasets=datasets)

    def run_page(request: Request) -> Response:
        try:
            run = rows_ready(store, store.run(request.path_params["run"]))
        except ValueError as exc:
            return not_found(request, str(exc))
        query = pages.RowQuery.parse(request.query_params)
        offset = (query.page - 1) * pages.PAGE_SIZE
        rows = store.rows(run.id, offset=offset, limit=pages.PAGE_SIZE + 1, **query.filters())
        more = len(rows) > pages.PAGE_SIZE
        rows = rows[: pages.PAGE_SIZE]
        keys = list(run.aggregates)
        histograms = {k: pages.bars(h) for k, h in (run.details.get("histograms") or {}).items()}
        labellers = sorted({lab.labeller for lab in store.labels(run.id)})
        agreements = []
        if len(labellers) >= 2:
            from openevals.calibration.labels_store import labeller_agreement

            pairs = itertools.combinations(labellers, 2)
            found = [(a, b, labeller_agreement(store, run.id, a, b)) for a, b in pairs]
            agreements = [pair for pair in found if pair[2] is not None]
        return render(
            request,
            "run.html",
            run=run,
            keys=keys,
            rows=[
                (row, pages.score_cells(row, keys), pages.pretty(row.get("outputs"), 160))
                for row in rows
            ],
            query=query,
            more=more,
            histograms=histograms,
            labellers=labellers,
            agreements=agreements,
            pretty=pages.pretty,
        )

    def row_page(request: Request) -> Response:
        try:
            run = rows_ready(store, store.run(request.path_params["run"]))
            row = store.row(run.id, request.path_params["pos"])
        except ValueError as exc:
            return not_found(request, str(exc))
        labels = [lab for lab in store.labels(run.id) if lab.row_id == str(row.get("id"))]
        return render(
            request,
            "row.html",
            run=run,
            row=row,
            evaluations=pages.evaluations_of(row),
            labels=labels,
            pretty=pages.pretty,
            labeller=request.cookies.get("openevals_labeller", ""),
        )

    def by_id(request: Request) -> Response:
        try:
            run_id = rows_ready(store, store.run(request.path_params["run"])).id
        except ValueError as exc:
            return not_found(request, str(exc))
        pos = store.position(run_id, request.query_params.get("id", ""))
        if pos is None:
            return not_found(request, "no such row in this run")
        return RedirectResponse(f"/runs/{run_id}/rows/{pos}", status_code=303)

    async def label(request: Request) -> Response:
        form = await _form(request)
        sent, cookie = str(form.get("csrf", "")), request.cookies.get(_CSRF_COOKIE, "")
        if not cookie or not hmac.compare_digest(sent, cookie) or not _same_origin(request):
            return PlainTextResponse("refused: missing or wrong CSRF token", status_code=403)
        run_id, pos = int(request.path_params["run"]), int(request.path_params["pos"])
        name, value = str(form.get("labeller", "")), str(form.get("value", ""))
        try:
            row = store.row(run_id, pos)
            store.add_label(
                run_id,
                str(row.get("id")),
                labeller=name,
                value=parse_label(value),
                reason=str(form.get("reason", "")).strip() or None,
            )
        except ValueError as exc:
            return render(request, "error.html", status=400, message=str(exc))
        response = RedirectResponse(f"/runs/{run_id}/rows/{pos}", status_code=303)
        response.set_cookie("openevals_labeller", name.strip(), httponly=True, samesite="strict")
        return response

    def compare_page(request: Request) -> Response:
        a, b = request.query_params.get("a"), request.query_params.get("b")
        runs = [r for r in store.runs(limit=200) if r.kind != "compare"]
        comparison = error = None
        if a and b:
            from openevals.viewer.history import diff

            try:
                comparison = diff(store, a, b)
            except (ValueError, TypeError) as exc:
                error = str(exc)
        return render(
            request, "compare.html", runs=runs, a=a, b=b, comparison=comparison, error=error
        )

    def trend_page(request: Request) -> Response:
        from openevals.viewer.history import trend, trend_keys

        dataset = request.query_params.get("dataset") or None
        keys = trend_keys(store, dataset=dataset)
        key = request.query_params.get("key") or (keys[0] if keys else None)
        points = trend(store, key, dataset=dataset) if key else []
        return render(
            request,
            "trend.html",
            keys=keys,
            key=key,
            dataset=dataset,
            points=points,
            chart=pages.trend_chart(points),
        )

    routes = [
        Route("/", runs_page),
        Route("/runs/{run}", run_page),
        Route("/runs/{run:int}/row", by_id),
        Route("/runs/{run}/rows/{pos:int}", row_page),
        Route("/runs/{run:int}/rows/{pos:int}/label", label, methods=["POST"]),
        Route("/compare", compare_page),
        Route("/trend", trend_page),
        Mount("/static", app=StaticFiles(directory=str(_HERE / "static")), name="static"),
    ]
    middleware = [
        Middleware(
            TrustedHostMiddleware, allowed_hosts=list(hosts or ("127.0.0.1", "localhost", "[::1]"))
        )
    ]
    app = Starlette(routes=routes, middleware=middleware)
    if token:
        return _TokenGate(app, token)
    return app


_MAX_FORM = 64 * 1024


async def _form(request: Any) -> dict[str, str]:
    """A url-encoded form body (the label form; at most 64 KiB), each field's first value."""
    from urllib.parse import parse_qs

    body = await request.body()
    if len(body) > _MAX_FORM:
        return {}
    fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    return {name: values[0] for name, values in fields.items()}


def _same_origin(request: Any) -> bool:
    """A POST's ``Origin`` (or ``Referer``) names this host, when the browser sends one."""
    origin = request.headers.get("origin") or request.headers.get("referer")
    if not origin:
        return True
    return bool(urlsplit(origin).netloc == request.headers.get("host"))


class _TokenGate:
    """Every request must carry the token: ``?token=`` (which sets a cookie) or the cookie."""

    def __init__(self, app: Any, token: str) -> None:
        self.app, self.token = app, token

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        from starlette.requests import Request
        from starlette.responses import PlainTextResponse, RedirectResponse

        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        given = request.query_params.get("token")
        if given is not None and hmac.compare_digest(given, self.token):
            response: Any = RedirectResponse(request.url.path, status_code=303)
            response.set_cookie(_TOKEN_COOKIE, self.token, httponly=True, samesite="strict")
        elif hmac.compare_digest(request.cookies.get(_TOKEN_COOKIE, ""), self.token):
            await self.app(scope, receive, send)
            return
        else:
            response = PlainTextResponse(
                "a token is required: open the URL `openevals view` printed", status_code=401
            )
        await response(scope, receive, send)
