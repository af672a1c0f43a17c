"""A model folder's identity and the per-machine folders built from it: `fingerprint`
(a short hash of its files and of library versions: the key of a cache folder),
`publish_dir` (a folder built once, atomically, under a lock), `versions` and
`importable` (what an optional backend's packages are here), and `CacheDirs` (where
those folders go: the caller says, from the settings). Shared by the tokenizer cache
(`tokens`), the ONNX exports (`onnx_backend`) and e5's backends."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from rag_assets.core.lake import file_lock

# Files that hold weights: they never change how text is tokenized.
WEIGHT_SUFFIXES = (
    ".safetensors",
    ".bin",
    ".pt",
    ".pth",
    ".h5",
    ".msgpack",
    ".ot",
    ".onnx",
    ".ckpt",
    ".gguf",
)


@dataclass(frozen=True)
class CacheDirs:
    """Where this machine's model caches live: `root` (the tokenizer cache under
    `tokenizers/`) and `onnx` (ONNX exports and the int8 graphs). The settings say where
    (`rag_assets.settings.cache_dirs`: `TRECHO_CACHE_DIR`, `TRECHO_ONNX_DIR`); the core
    never reads the environment for it."""

    root: Path
    onnx: Path

    @classmethod
    def under(cls, root: Path) -> CacheDirs:
        """The caches of one root folder (exports in `<root>/onnx`)."""
        return cls(root, root / "onnx")

    @classmethod
    def default(cls) -> CacheDirs:
        """`~/.cache/trecho`: where an embedder built without settings keeps its caches."""
        return cls.under(Path.home() / ".cache" / "trecho")

    @property
    def tokenizers(self) -> Path:
        """The tokenizer cache (`tokens.ModelInfo` folders)."""
        return self.root / "tokenizers"


def importable(*modules: str) -> bool:
    """Whether every one of `modules` imports here (an optional backend's packages)."""
    try:
        for name in modules:
            __import__(name)
    except ImportError:
        return False
    return True


def versions(*packages: str) -> list[str]:
    """`name==version` of installed packages (without importing them)."""
    out = []
    for name in packages:
        try:
            out.append(f"{name}=={version(name)}")
        except PackageNotFoundError:
            out.append(f"{name}==none")
    return out


def _model_files(root: Path) -> Iterator[tuple[str, Path]]:
    for folder, dirs, files in os.walk(root, followlinks=True):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.startswith("."):
                path = Path(folder) / name
                yield path.relative_to(root).as_posix(), path


_FINGERPRINTS: dict[tuple[str, bool, tuple[str, ...]], str] = {}


def fingerprint(model_dir: str | Path, weights: bool, extra: Sequence[str] = ()) -> str:
    """A short sha256 of a model folder's files (names and contents; weight files only if
    `weights`) and of `extra` strings (library versions). Memoized per process."""
    key = (str(Path(model_dir).resolve()), weights, tuple(extra))
    if key not in _FINGERPRINTS:
        digest = hashlib.sha256()
        for rel, path in _model_files(Path(model_dir)):
            if not weights and path.suffix in WEIGHT_SUFFIXES:
                continue
            digest.update(rel.encode() + b"\0")
            with path.open("rb") as handle:
                while block := handle.read(1 << 20):
                    digest.update(block)
        for item in extra:
            digest.update(b"\0" + item.encode())
        _FINGERPRINTS[key] = digest.hexdigest()[:12]
    return _FINGERPRINTS[key]


def publish_dir(target: Path, build: Callable[[Path], None], done_file: str) -> bool:
    """Build the folder `target` once, atomically: `build` fills a temporary folder beside
    it, which is then renamed into place, so a reader sees no folder or a complete one. A
    lock file makes a second process wait for the first rather than build it again (were
    both to build anyway, the second rename fails and its copy is dropped). Returns
    whether this call built it."""
    if (target / done_file).is_file():
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(target.parent / f".{target.name}.lock"):
        if (target / done_file).is_file():
            return False
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
        try:
            umask = os.umask(0)
            os.umask(umask)
            tmp.chmod(0o777 & ~umask)  # mkdtemp makes it private; the cache is not secret
            build(tmp)
            if target.exists():  # a leftover without its done file: incomplete
                shutil.rmtree(target, ignore_errors=True)
            try:
                os.rename(tmp, target)
            except OSError:
                if not (target / done_file).is_file():
                    raise
                return False
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return True
