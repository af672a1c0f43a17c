"""A version's optional sidecar (`<version>.yaml`): what it may say and how it is checked."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any

import yaml

from rag_assets.core.lake.layout import LakeError, LakePath

_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE = "tag:yaml.org,2002:merge"


class DuplicateKeyError(yaml.YAMLError):
    """A mapping of the sidecar names one key twice."""


class _Loader(_BASE):  # type: ignore[misc, valid-type]
    """libyaml's safe loader when PyYAML has it (7x faster here, the same types), else the
    pure-Python one; a key given twice in one mapping is refused (YAML itself takes the
    last and says nothing, so a sidecar's first `valid_to` would silently not count)."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE:
                continue
            key = self.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            try:
                if key in seen:
                    where = f"lines {seen[key]} and {line}" if seen[key] != line else f"line {line}"
                    raise DuplicateKeyError(f"key {key!r} is given twice ({where})")
                seen[key] = line
            except TypeError:  # an unhashable key: the base constructor refuses it
                continue
        return super().construct_mapping(node, deep=deep)


_LOADER = _Loader

ACTIVE = "active"
"""The status of a version in effect; `revoked` takes it out of the index."""
STATUSES = (ACTIVE, "revoked")
SIDECAR_KEYS = ("title", "valid_from", "valid_to", "status", "type", "metadata")


def _as_date(value: Any, field_name: str, path: LakePath) -> dt.date | None:
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError as exc:
        raise LakeError(f"{path}: {field_name} {value!r} is not a date (YYYY-MM-DD)") from exc


_TIMESTAMP = "tag:yaml.org,2002:timestamp"


def _bad_date(text: str) -> str:
    """The field and value of the first date in a sidecar's YAML that does not exist
    (`valid_to '2026-13-01' (line 2)`), read from its nodes (nothing constructed); ""
    when none is found."""
    try:
        nodes = [("", yaml.compose(text, Loader=yaml.SafeLoader))]
    except yaml.YAMLError:
        return ""
    while nodes:
        where, node = nodes.pop(0)
        if isinstance(node, yaml.MappingNode):
            nodes += [(f"{where}.{k.value}".lstrip("."), v) for k, v in node.value]
        elif isinstance(node, yaml.SequenceNode):
            nodes += [(f"{where}[{i}]", v) for i, v in enumerate(node.value)]
        elif isinstance(node, yaml.ScalarNode) and node.tag == _TIMESTAMP:
            try:
                dt.date.fromisoformat(node.value[:10])
            except ValueError:
                return f"{where or 'a date'} {node.value!r} (line {node.start_mark.line + 1})"
    return ""


@dataclass(frozen=True)
class Sidecar:
    """What a version's optional `<version>.yaml` says about it."""

    title: str | None = None
    valid_from: dt.date | None = None
    valid_to: dt.date | None = None
    status: str = ACTIVE
    type: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def read(cls, path: LakePath) -> Sidecar:
        """Parse a sidecar file; any problem is a LakeError naming the file and the key.

        Checked: the YAML parses to a mapping, no key is given twice, every key is known,
        dates are real YYYY-MM-DD dates, `valid_to` is not before `valid_from`, `status`
        is known and `metadata` is a mapping."""
        if not path.exists():
            return cls()
        text = ""
        try:
            text = path.read_text(encoding="utf-8")
            data = yaml.load(text, Loader=_LOADER)
        except DuplicateKeyError as exc:
            raise LakeError(f"{path}: sidecar {exc}; keep one") from exc
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            problem = " ".join(str(exc).split())
            raise LakeError(f"{path}: sidecar does not parse as YAML: {problem}") from exc
        except ValueError as exc:  # YAML reads 2026-02-30 as a date that does not exist
            where = _bad_date(text) or "a date in the sidecar"
            raise LakeError(f"{path}: {where} does not exist ({exc})") from exc
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise LakeError(f"{path}: sidecar must be a mapping, got {type(data).__name__}")
        unknown = sorted(str(k) for k in set(data) - set(SIDECAR_KEYS))
        if unknown:
            raise LakeError(
                f"{path}: unknown sidecar key{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(map(repr, unknown))} (known: {', '.join(SIDECAR_KEYS)})"
            )
        status = str(data.get("status", ACTIVE)).strip().lower()
        if status not in STATUSES:
            raise LakeError(f"{path}: status {status!r} must be one of {list(STATUSES)}")
        metadata = data.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise LakeError(f"{path}: metadata must be a mapping")
        valid_from = _as_date(data.get("valid_from"), "valid_from", path)
        valid_to = _as_date(data.get("valid_to"), "valid_to", path)
        if valid_from is not None and valid_to is not None and valid_to < valid_from:
            raise LakeError(
                f"{path}: valid_to {valid_to} is before valid_from {valid_from} "
                "(no date would ever return this version)"
            )
        return cls(
            title=str(data["title"]) if data.get("title") is not None else None,
            valid_from=valid_from,
            valid_to=valid_to,
            status=status,
            type=str(data["type"]) if data.get("type") is not None else None,
            metadata=metadata,
        )

    def to_json(self) -> dict[str, Any]:
        """The sidecar as JSON values, for `LakeMemo` (dates as ISO strings, `metadata` as
        the documents table stores it, values JSON has no type for as strings: a
        version's run writes `from_json`'s the same). Raises TypeError when `metadata`
        has no JSON form (a date as a key)."""
        text = json.dumps(self.metadata, ensure_ascii=False, default=str)
        return {
            "title": self.title,
            "valid_from": self.valid_from.isoformat() if self.valid_from else None,
            "valid_to": self.valid_to.isoformat() if self.valid_to else None,
            "status": self.status,
            "type": self.type,
            "metadata": json.loads(text),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Sidecar:
        """A sidecar back from `to_json` (metadata values JSON has no type for, such as
        dates, come back as the strings the documents table holds)."""
        day = dt.date.fromisoformat
        return cls(
            title=data["title"],
            valid_from=day(data["valid_from"]) if data["valid_from"] else None,
            valid_to=day(data["valid_to"]) if data["valid_to"] else None,
            status=data["status"],
            type=data["type"],
            metadata=dict(data["metadata"]),
        )
