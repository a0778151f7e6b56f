"""Renderers: ``Report -> str``, one module per format; no printing, no clock, no isatty.

The registry below is the one list of formats: the CLI's ``--format`` choices, the README and the tests
read it.  A new format is one module with a ``render``-style function plus one line here.  ``documents``:
the format also renders the document commands (``rules``, ``rule``, ``kb info``, ``recommend``), whose
views live in ``render.listing``."""
from __future__ import annotations

import importlib
from typing import Any, Callable

from gpuvet.model import Report
from gpuvet.model.record import record


@record(frozen=True)
class Format:
    """An output format: its name, the renderer that writes it, and its help."""

    name: str
    target: str  # "module:function"
    help: str
    documents: bool = False


REGISTRY: tuple[Format, ...] = (
    Format("terminal", "gpuvet.render.terminal:render_terminal", "for people (colour on a terminal)", documents=True),
    Format("json", "gpuvet.render.json:render_json", "versioned document (docs/report-schema.json)", documents=True),
    Format("markdown", "gpuvet.render.markdown:render_markdown", "for an issue or a pull request"),
    Format("junit", "gpuvet.render.junit:render_junit", "JUnit XML for CI test reports"),
    Format("github", "gpuvet.render.github:render_github", "GitHub Actions workflow annotations"),
    Format("sarif", "gpuvet.render.sarif:render_sarif", "SARIF 2.1.0 for code-scanning dashboards"),
    Format("html", "gpuvet.render.html:render_html", "one self-contained page with plots (validate, bench)"),
)

FORMATS: tuple[str, ...] = tuple(f.name for f in REGISTRY)


def formats(documents: bool = False) -> list[str]:
    """The format names; ``documents``: only those that also render the document commands."""
    return [f.name for f in REGISTRY if f.documents or not documents]


def render(report: Report, fmt: str, **opts: Any) -> str:
    """The report in ``fmt``, with every secret masked (the one redactor, model/redact.py)."""
    from gpuvet.model.redact import redact_text

    return redact_text(renderer(fmt)(report, **opts))


def renderer(fmt: str) -> Callable[..., str]:
    spec = next((f for f in REGISTRY if f.name == fmt), None)
    if spec is None:
        raise ValueError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
    module, _, func = spec.target.partition(":")
    return getattr(importlib.import_module(module), func)
