"""The Click group of every sub-command (imported only when a command goes through Click: ``gpuvet
check``'s plain invocations do not, see ``cli.check_run``)."""
from __future__ import annotations

import importlib

import click

from gpuvet import __version__
from gpuvet.app.env import Environment

from .main import COMMANDS


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        spec = COMMANDS.get(name)
        if spec is None:
            return None
        try:
            mod = importlib.import_module(spec[0])
        except ModuleNotFoundError as exc:
            if exc.name == spec[0]:
                return None
            raise
        return getattr(mod, spec[1])

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in sorted(COMMANDS) if _available(name)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _available(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(COMMANDS[name][0]) is not None


def _print_version(ctx: click.Context, _param, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    env = ctx.obj if isinstance(ctx.obj, Environment) else Environment()
    try:
        from gpuvet import kb

        k = kb.load()
        kbv = f"knowledge base {k.version} ({k.date})"
    except Exception as exc:  # a broken KB must not hide the version
        kbv = f"knowledge base unreadable: {type(exc).__name__}"
    env.stdout.write(f"gpuvet {__version__}, {kbv}\n")
    ctx.exit(0)


EXIT_HELP = """Exit status: 0 nothing at or above --fail-on; 1 findings at or above --fail-on;
2 usage error; 3 bad input (unreadable, binary, empty, truncated or oversized file); 4 gpuvet's own failure."""


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_HELP)
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show gpuvet's version and its knowledge base's, and exit.")
def cli() -> None:
    """gpuvet: keep GPU machine-learning stacks (ROCm and CUDA) healthy."""
