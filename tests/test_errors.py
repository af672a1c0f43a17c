"""User errors against bugs: what a user can fix is one line with exit 2; a bug stays a
traceback, never disguised as the user's mistake."""

from __future__ import annotations

import pytest

from rag_assets.cli import main
from rag_assets.core.chunking import build_chunker
from rag_assets.core.errors import ConfigError, UserError
from rag_assets.core.lake.layout import Lake

from .conftest import copy_lake


@pytest.fixture
def raw_lake(tmp_path) -> Lake:
    """A lake with one sample version in raw/, nothing derived (status reads raw/ only)."""
    return copy_lake(tmp_path / "lake", ["manual-operacao"], [])


def test_a_bug_inside_a_command_is_a_traceback_not_a_user_error(raw_lake, monkeypatch, capsys):
    def bug(self, doc_id=None):
        raise ValueError("an internal invariant broke")

    monkeypatch.setattr(Lake, "scan_raw", bug)
    with pytest.raises(ValueError, match="an internal invariant broke"):
        main(["status", "--lake", str(raw_lake.root)])
    assert "trecho status:" not in capsys.readouterr().err


def test_a_user_error_inside_a_command_is_one_line_with_exit_2(raw_lake, monkeypatch, capsys):
    def unreadable(self, doc_id=None):
        raise UserError(f"{self.raw_dir}: permission denied")

    monkeypatch.setattr(Lake, "scan_raw", unreadable)
    assert main(["status", "--lake", str(raw_lake.root)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("trecho status: ") and "permission denied" in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "name, problem",
    [
        ("fixed_tokens-0-o0", "size must be > 0"),
        ("fixed_tokens-64-o64", "must be smaller than size"),
        ("no-such-strategy", "unknown chunking strategy"),
    ],
)
def test_a_bad_strategy_is_a_config_error_naming_the_value(name, problem, embedder):
    with pytest.raises(ConfigError, match=problem):
        build_chunker(name, embedder)


def test_an_unknown_model_is_one_line_naming_it(tmp_path, capsys):
    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], ["manuais.jsonl"])
    assert main(["eval", "--models", "no-such-model", "--lake", str(lake.root)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "'no-such-model'" in err and "not a bundled model" in err
