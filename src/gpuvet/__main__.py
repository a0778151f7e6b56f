import sys

from gpuvet.cli.fast import run

sys.exit(run())
