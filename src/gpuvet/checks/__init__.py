"""Rules: ``(facts, kb) -> Iterable[Finding]``, one module per stack layer, pure."""
