"""Renderers: ``Report -> str``, one module per format; no printing, no clock, no isatty."""
from __future__ import annotations

from typing import Callable

from gpuvet.model import Report

FORMATS = ("terminal", "json", "markdown", "junit", "html")


def render(report: Report, fmt: str, **opts) -> str:
    return renderer(fmt)(report, **opts)


def renderer(fmt: str) -> Callable[..., str]:
    if fmt == "json":
        from .json import render_json
        return render_json
    if fmt == "markdown":
        from .markdown import render_markdown
        return render_markdown
    if fmt == "junit":
        from .junit import render_junit
        return render_junit
    if fmt == "html":
        from .html import render_html
        return render_html
    if fmt == "terminal":
        from .terminal import render_terminal
        return render_terminal
    raise ValueError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
