"""The version lifecycle: which versions are in force, live or superseded; the change rule
(reconcile); removing a version from every store (purge); a version's chunks stage
(`cutting.Cutting.cut_version`) and embeddings stage (`indexing.Indexing.index_version`),
whole, as their assets call them."""
