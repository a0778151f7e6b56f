"""The GPU validation suite: cases run in child processes of the examined interpreter.

- ``child/``: the worker and the cases; standard library + the framework under test only, never
  imported by gpuvet (it is run as a script by ``runner``).
- ``runner``: spawns workers, per-case time-outs, crash/hang isolation, multi-rank cases.
- ``cases``: the catalogue (levels, time-outs, operators each case exercises).
- ``findings``: case results -> VAL findings; ``compare``: baseline deltas with a noise band;
  ``peaks``: against the GPU's expected peaks; ``scan``: AST scan of user code; ``record``: run records.

Imports only ``gpuvet.model`` (an import-linter contract).
"""
