"""The CLI's names for the injected environment (it lives in the use-case layer: ``gpuvet.app.env``)."""
from gpuvet.app.env import Environment
from gpuvet.model.errors import GpuvetError

__all__ = ["Environment", "GpuvetError"]
