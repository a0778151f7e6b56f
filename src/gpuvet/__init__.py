"""gpuvet: keep GPU machine-learning stacks (ROCm and CUDA) healthy."""
__version__ = "0.1.0"
