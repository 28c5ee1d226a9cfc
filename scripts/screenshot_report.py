"""Render an HTML report with headless Chromium and save a PNG screenshot (not run in CI).

    python scripts/screenshot_report.py REPORT.html [OUT.png] [--width 1400] [--height 2200]

Without REPORT.html (``--demo``), runs the offline demo first and screenshots its report. Needs a
``chromium`` (or ``chromium-browser`` / ``google-chrome``) binary; the browser runs with networking
features off and a throwaway profile, so the screenshot also proves the report needs no external
assets.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_browser() -> str | None:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def screenshot(report: Path, out: Path, *, width: int, height: int, timeout: float = 120.0) -> Path:
    browser = find_browser()
    if browser is None:
        raise SystemExit(
            "no Chromium found (install it with `apt-get install -y chromium`); tried "
            + ", ".join(BROWSERS)
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="openevals-chromium-") as profile:
        cmd = [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            f"--screenshot={out.resolve()}",
            report.resolve().as_uri(),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0 or not out.exists():
        raise SystemExit(
            f"chromium failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}\n{proc.stdout[-500:]}"
        )
    return out


def _demo_report(directory: Path) -> Path:
    report = directory / "report.html"
    from openevals.cli import main

    status = main(["demo", "--report", str(report), "--no-progress"])
    if status != 0:
        raise SystemExit(f"`openevals demo` exited with {status}")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", nargs="?", help="HTML report (omit with --demo)")
    parser.add_argument("out", nargs="?", help="PNG path (default: next to the report)")
    parser.add_argument("--demo", action="store_true", help="run `openevals demo` first")
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--height", type=int, default=2200)
    args = parser.parse_args(argv)
    if args.demo:
        work = Path(tempfile.mkdtemp(prefix="openevals-shot-"))
        report = _demo_report(work)
    elif args.report:
        report = Path(args.report)
        if not report.exists():
            parser.error(f"no such report: {report}")
    else:
        parser.error("give a REPORT.html or --demo")
    out = Path(args.out) if args.out else report.with_suffix(".png")
    path = screenshot(report, out, width=args.width, height=args.height)
    print(path)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main())
