import sys

from gpuvet.cli.main import run

sys.exit(run())
