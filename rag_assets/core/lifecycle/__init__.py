"""The version lifecycle: which versions are in force, live or superseded; the change rule
(reconcile); removing a version from every store (purge)."""
