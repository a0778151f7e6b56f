"""Literal gates: moved to :mod:`gpuvet.model.gate` (day 8), since ``probes.pasted`` gates its detectors with them too
and the probes layer imports only the model.  The names stay importable from here."""
from gpuvet.model.gate import GATE_FORMAT, MIN_NEEDLE, LiteralGate, MultiGate, gate_plan, split_top

__all__ = ["GATE_FORMAT", "MIN_NEEDLE", "LiteralGate", "MultiGate", "gate_plan", "split_top"]
