"""Probes: one module per source of facts; ``parse(text) -> rows`` (pure) + ``probe(system) -> rows``."""
