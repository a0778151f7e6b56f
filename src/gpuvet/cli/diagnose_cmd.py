"""`gpuvet diagnose FILE|-`: argv -> DiagnoseOptions -> app.diagnose.run -> render -> exit status."""
from __future__ import annotations

import click

from .common import env_of, format_option

EPILOG = """Exit status: 0 no stack problem found (nothing, or only the user's code or data, is blamed); 1 at
least one diagnosis that blames the stack; 3 bad input
(missing, unreadable, directory, binary or empty); 4 gpuvet's own failure."""


@click.command(epilog=EPILOG)
@click.argument("log", required=False, metavar="FILE|-")
@click.option("--here", is_flag=True, help="Add this machine's live facts (the probes of `gpuvet check`).")
@click.option("--follow", "follow", metavar="FILE", default=None,
              help="Watch a growing log; report the first diagnosis as soon as its evidence appears.")
@click.option("--wait", "wait_s", type=float, default=None, metavar="SECONDS",
              help="With --follow: give up after this many seconds without a diagnosis (default: wait until interrupted).")
@format_option()
@click.option("--output", "-o", "output", type=click.Path(dir_okay=False), default=None,
              help="Write the report to this file instead of standard output.")
@click.option("--verbose", "-v", is_flag=True, help="Show more detail.")
@click.option("--no-grep", is_flag=True, hidden=True, help="Never use grep as the prefilter (testing).")
@click.pass_context
def diagnose(ctx: click.Context, log, here, follow, wait_s, fmt, output, verbose, no_grep) -> int:
    """Name the most likely root causes of a failure from a log or a pasted bug report (FILE, or - for stdin).

    Each diagnosis has the cause (gpuvet's taxonomy), the component at fault, a confidence, the evidence (log
    lines with line numbers and the facts found in the text), why it ranks above the others, and the fix.
    A plain user-code error that merely ran on a GPU gives an empty list: nothing in the stack is blamed."""
    from .diagnose_run import run_diagnose

    return run_diagnose(env_of(ctx), log=log, here=here, follow=follow, wait_s=wait_s, fmt=fmt, output=output,
                        verbose=verbose, no_grep=no_grep)
