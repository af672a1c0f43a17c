"""The one partitions definition: a dynamic partition per document version `<doc_id>@<version>`.

Keys are validated (`[a-z0-9._-]`, no `..`) by `core.lake.layout.make_key` when the raw folder is
scanned, and again by every stage before it touches a path.
"""

from __future__ import annotations

from dagster import DynamicPartitionsDefinition

DOC_VERSIONS = "doc_versions"

doc_versions = DynamicPartitionsDefinition(name=DOC_VERSIONS)
