"""The one partitions definition: a dynamic partition per document version `<doc_id>@<version>`."""

from __future__ import annotations

from dagster import DynamicPartitionsDefinition

from rag_assets.core.lake import split_key

DOC_VERSIONS = "doc_versions"

doc_versions = DynamicPartitionsDefinition(name=DOC_VERSIONS)


def checked_key(key: str) -> str:
    """A partition key validated against DESIGN.md's pattern (raises a clear LakeError)."""
    split_key(key)
    return key
