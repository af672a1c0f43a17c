"""The removal ledger (`<lake>/removed_versions.json`): every key that ever left the index,
when and why, and when it came back.

`Lake` opens one (`Lake.ledger`) and answers its removal questions through it
(`Lake.tombstones`, `removed_keys`, `add_tombstone(s)`, `note_indexed_again`,
`removal_history`); writes are read-modify-write under a local file lock."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rag_assets.core.lake.keys import LakeError, LakePath, sha256_file, split_key, write_atomically
from rag_assets.core.lake.listing import LakeMemo, path_state
from rag_assets.core.lake.locks import file_lock


class TombstoneLedger:
    """The removal records of one lake: `path` (the JSON file), `lock` (the local file
    locked around a write), `raw_dir` (where a removed version's PDF is hashed) and
    `memo` (the lake's memo, opened only when asked)."""

    def __init__(
        self, path: LakePath, lock: Path, raw_dir: LakePath, memo: Callable[[], LakeMemo]
    ) -> None:
        self.path = path
        self.lock = lock
        self.raw_dir = raw_dir
        self.memo = memo

    def tombstones(self) -> dict[str, dict[str, Any]]:
        """Every key ever removed: `reason`, `removed_at` (UTC ISO) and `sha256` of its
        latest removal, `removed` (whether it is out of the index now) and `history`
        (every removal and every return to the index, oldest first)."""
        path = self.path
        if not path.exists():
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise LakeError(f"{path}: not valid JSON ({exc}); fix or delete it") from exc
        if not isinstance(data, dict):
            raise LakeError(f"{path}: expected a JSON object of removed keys")
        for entry in data.values():  # files written before the history was kept
            entry.setdefault("removed", True)
            entry.setdefault(
                "history",
                [{"event": "removed", "at": entry.get("removed_at", ""), **_removal(entry)}],
            )
        return data

    def removed_keys(self) -> set[str]:
        """The keys out of the index now by a removal (`removed` in `tombstones`): read
        from the records only when their file changed since a command last read it
        (`Lake.memo`; the records of a large lake are megabytes of JSON)."""
        if not isinstance(self.path, Path):
            return {k for k, v in self.tombstones().items() if v["removed"]}
        state = path_state(self.path)
        if state is None:
            return set()
        memo = self.memo()
        kept = memo.get("ledger", "removed", state)
        if isinstance(kept, list):
            return set(kept)
        removed = sorted(k for k, v in self.tombstones().items() if v["removed"])
        memo.put("ledger", "removed", state, removed)
        return set(removed)

    def _update(self, key: str, change: Callable[[dict[str, dict[str, Any]]], bool]) -> bool:
        """Apply `change(data)` to the removal records under their lock; write them back
        when it returns True."""
        split_key(key)
        with file_lock(self.lock):
            data = self.tombstones()
            if not change(data):
                return False
            write_atomically(
                self.path,
                (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8"),
            )
            return True

    def add_tombstone(self, key: str, reason: str) -> bool:
        """Record that `key` left the index and why (nothing when it is already out);
        returns whether a removal was recorded."""
        return key in self.add_tombstones({key: reason})

    def add_tombstones(self, reasons: dict[str, str]) -> list[str]:
        """`add_tombstone` for several keys in one read and one write of the records;
        returns the keys whose removal was recorded."""
        for key in reasons:
            split_key(key)
        recorded: list[str] = []

        def change(data: dict[str, dict[str, Any]]) -> bool:
            for key, reason in reasons.items():
                entry = data.get(key)
                if entry is not None and entry["removed"]:
                    continue
                pdf = self.raw_dir / key.replace("@", "/", 1)
                pdf = pdf.with_name(pdf.name + ".pdf")
                removal = {
                    "reason": reason,
                    "removed_at": _now(),
                    "sha256": sha256_file(pdf) if pdf.is_file() else "",
                }
                history = [] if entry is None else entry["history"]
                history.append(
                    {"event": "removed", "at": removal["removed_at"], **_removal(removal)}
                )
                data[key] = {**removal, "removed": True, "history": history}
                recorded.append(key)
            return bool(recorded)

        if reasons:
            self._update(next(iter(reasons)), change)
        return recorded

    def note_indexed_again(self, key: str, sha256: str) -> bool:
        """Record that a removed key is back in the index (its file is live again);
        returns whether it had been removed."""

        def change(data: dict[str, dict[str, Any]]) -> bool:
            entry = data.get(key)
            if entry is None or not entry["removed"]:
                return False
            entry["removed"] = False
            entry["history"].append({"event": "indexed again", "at": _now(), "sha256": sha256})
            return True

        return self._update(key, change)

    def removal_history(self, key: str) -> str:
        """One line of what happened to `key` before (empty when it was never removed),
        e.g. `removed 2026-03-02 (revoked); indexed again 2026-03-05`."""
        entry = self.tombstones().get(key)
        if entry is None:
            return ""
        return "; ".join(
            f"{e['event']} {e['at'][:10]}" + (f" ({e['reason']})" if e.get("reason") else "")
            for e in entry["history"]
        )


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _removal(entry: dict[str, Any]) -> dict[str, str]:
    return {"reason": entry.get("reason", ""), "sha256": entry.get("sha256", "")}
