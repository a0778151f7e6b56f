"""Snapshots, diffs and rollback plans: pure functions over snapshot documents (no machine access).

``snapshot``: the versioned document (seal, verify, load); ``diff``: what changed, most dangerous
first, as findings; ``rollback``: an ordered plan back to an earlier snapshot."""
