"""Use cases: check, diagnose, compat, recommend, rules, kb info (run, snapshot, diff, validate, watch and
fleet join here).  Each takes its options and an :class:`~gpuvet.app.env.Environment` and returns a
``Report``; the CLI parses argv, calls one, renders the report and sets the exit status.

Layering: ``app`` may import every layer below it (model, probes, kb, checks, logs, render, ...);
nothing imports ``app`` but ``cli`` (an import-linter contract in pyproject.toml)."""
