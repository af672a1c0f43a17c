"""Contextual Retrieval (optional, off by default): an LLM situates each chunk in its document.

Anthropic's recipe: before embedding, ask an LLM for one short sentence that says where a
chunk sits in its document and what it is about, and put that sentence in the embedded
text. Here the sentence goes right after the chunk's context header, so the embedded text
reads `header \\n sentence \\n body` (the `header` field grows by the sentence, so
`text == header + "\\n" + body` still holds).

The endpoint is any OpenAI-compatible server (llama.cpp, vLLM, Ollama, OpenAI), called with
the standard library only. It is never trusted to be up: a chunk whose call fails (refused,
timeout, HTTP error, malformed reply) keeps its structural header, the failure is counted
and reported, and nothing raises. Sentences are cached on disk per (document sha256, chunk
content hash, model, prompt), so a rerun costs no calls.

Cost: one LLM call per chunk (not per document), each sending the chunk, the document's
title and section path and a bounded excerpt of the document (its first `excerpt_chars`
characters, 2,000 by default; the whole document is never sent).
"""

from __future__ import annotations

import dataclasses
import hashlib
import http.client
import json
import logging
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag_assets.core.embedding import TokenCounter
from rag_assets.core.errors import ConfigError, UserError
from rag_assets.core.hosts import is_loopback_host
from rag_assets.core.lake import Chunk, content_hash

log = logging.getLogger(__name__)

SYSTEM_PROMPT = (
    "You situate an excerpt within its document, to improve search retrieval of the "
    "excerpt. Write exactly one short sentence, at most {max_words} words, in the same "
    "language as the document, that says where the excerpt sits in the document and what "
    "it is about. Answer with that sentence only: no preamble, no quotes, no list."
)
USER_TEMPLATE = (
    "Document title: {title}\n"
    "Section: {path}\n"
    "Beginning of the document (first {n} characters at most):\n"
    "<document>\n{excerpt}\n</document>\n"
    "Excerpt to situate:\n"
    "<excerpt>\n{body}\n</excerpt>"
)
MAX_REPLY_BYTES = 1_000_000
THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
QUOTES = "\"'“”‘’«»`"


class SituateError(UserError):
    """One call that did not yield a sentence (its message is what gets reported)."""


@dataclass
class SituateResult:
    """The chunks (situated where possible) and what it took.

    `called`: requests sent to the endpoint (failed ones included); `cached`: sentences
    read from the cache; `failed`: chunks left with their structural header because the
    call failed (or was not made after too many consecutive failures);
    `skipped_too_long`: chunks that got a sentence but kept their text because the
    sentence would push them past the model's maximum.
    """

    chunks: list[Chunk]
    called: int = 0
    cached: int = 0
    failed: int = 0
    skipped_too_long: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        """The four counters, e.g. for asset metadata."""
        return {
            "called": self.called,
            "cached": self.cached,
            "failed": self.failed,
            "skipped_too_long": self.skipped_too_long,
        }


class ReplyCache:
    """Replies an LLM already gave (situating sentences; the eval's written questions),
    one JSON-lines file per document under `cache_dir`, by (passage, model, prompt).

    Each entry is one line written with a single `write` on a file opened for appending, so
    concurrent writers (parallel partitions) cannot interleave within a line; a torn or
    foreign line (a crash mid-write) is skipped on reading.
    """

    def __init__(self, cache_dir: Path, doc_hash: str) -> None:
        name = doc_hash if re.fullmatch(r"[0-9a-fA-F]{8,128}", doc_hash) else _sha(doc_hash)
        self.path = Path(cache_dir) / f"{name.lower()}.jsonl"
        self.doc_hash = doc_hash
        self.entries: dict[tuple[str, str, str], str] = {}
        if not self.path.is_file():
            return
        unreadable = 0
        with self.path.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                try:
                    item = json.loads(line)
                    key = (str(item["chunk"]), str(item["model"]), str(item["prompt"]))
                    if item["doc"] == doc_hash and isinstance(item["sentence"], str):
                        self.entries[key] = item["sentence"]
                except (ValueError, KeyError, TypeError):
                    unreadable += 1
        if unreadable:  # their chunks are situated again
            log.warning("%s: %d unreadable line(s) skipped", self.path, unreadable)

    def get(self, key: tuple[str, str, str]) -> str | None:
        return self.entries.get(key)

    def put(self, key: tuple[str, str, str], sentence: str) -> None:
        self.entries[key] = sentence
        item = {"doc": self.doc_hash, "chunk": key[0], "model": key[1], "prompt": key[2]}
        item["sentence"] = sentence
        line = (json.dumps(item, ensure_ascii=False) + "\n").encode("utf-8")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _is_loopback(url: str) -> bool:
    return is_loopback_host(urllib.parse.urlsplit(url).hostname or "")


def clean_sentence(reply: str, max_words: int) -> str:
    """The reply as one line: reasoning blocks, quotes and extra words dropped."""
    text = " ".join(THINK.sub(" ", reply).split()).strip().strip(QUOTES).strip()
    words = text.split()
    if len(words) > max_words:
        text = " ".join(words[:max_words]).rstrip(",;:") + " …"
    return text


class Situator:
    """Writes the situating sentence of each chunk via an OpenAI-compatible endpoint.

    `url` is the API base (e.g. `http://127.0.0.1:8080/v1`); `/chat/completions` is added.
    Loopback endpoints are called without any proxy from the environment. After
    `max_consecutive_failures` failed calls in a row the endpoint is taken to be down and
    the remaining chunks of that call to `situate` fail without a request, so a dead
    server costs at most that many timeouts per document.
    """

    def __init__(
        self,
        url: str,
        model: str,
        counter: TokenCounter,
        cache_dir: Path,
        api_key: str | None = None,
        timeout_s: float = 30.0,
        max_words: int = 40,
        excerpt_chars: int = 2000,
        max_consecutive_failures: int = 5,
    ) -> None:
        if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
            raise ConfigError(f"situator url must be http(s), got {url!r}")
        if timeout_s <= 0 or max_words <= 0 or excerpt_chars < 0:
            raise ConfigError("timeout_s and max_words must be > 0, excerpt_chars >= 0")
        self.endpoint = url.rstrip("/") + "/chat/completions"
        self.model = model
        self.counter = counter
        self.cache_dir = Path(cache_dir)
        self.api_key = api_key
        self.timeout_s = float(timeout_s)
        self.max_words = int(max_words)
        self.excerpt_chars = int(excerpt_chars)
        self.max_consecutive_failures = max(1, int(max_consecutive_failures))
        self.system_prompt = SYSTEM_PROMPT.format(max_words=self.max_words)
        # a change of prompt or of its bounds means other sentences: part of the cache key
        self.prompt_id = _sha(f"{self.system_prompt}\n{USER_TEMPLATE}\n{self.excerpt_chars}")[:12]
        proxies: dict[str, str] | None = {} if _is_loopback(self.endpoint) else None
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler(proxies))

    def messages(self, chunk: Chunk, doc_title: str, doc_text: str) -> list[dict[str, str]]:
        """The chat messages sent for one chunk."""
        excerpt = doc_text[: self.excerpt_chars].strip() or "(not available)"
        user = USER_TEMPLATE.format(
            title=doc_title or chunk.doc_id,
            path=chunk.path or "(none)",
            n=self.excerpt_chars,
            excerpt=excerpt,
            body=chunk.body.strip() or chunk.text.strip(),
        )
        return [
            {"role": "system", "content": self.system_prompt},
            {"role": "user", "content": user},
        ]

    def ask(self, messages: Sequence[dict[str, str]]) -> str:
        """One chat completion; raises `SituateError` for anything but a usable sentence."""
        payload = {
            "model": self.model,
            "messages": list(messages),
            "temperature": 0,
            "max_tokens": self.max_words * 4 + 16,
        }
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(
            self.endpoint, json.dumps(payload).encode("utf-8"), headers, method="POST"
        )
        try:
            with self._opener.open(request, timeout=self.timeout_s) as response:
                raw = response.read(MAX_REPLY_BYTES + 1)
        except urllib.error.HTTPError as err:
            detail = ""
            try:
                detail = err.read(300).decode("utf-8", "replace").strip()
            except (OSError, http.client.HTTPException) as exc:  # the status is what matters
                detail = f"(body unreadable: {exc})"
            raise SituateError(f"HTTP {err.code} {err.reason}: {detail}".strip(": ")) from None
        except urllib.error.URLError as err:
            raise SituateError(f"cannot reach {self.endpoint}: {err.reason}") from None
        except (TimeoutError, OSError) as err:
            raise SituateError(f"{type(err).__name__} calling {self.endpoint}: {err}") from None
        if len(raw) > MAX_REPLY_BYTES:
            raise SituateError(f"reply longer than {MAX_REPLY_BYTES} bytes")
        try:
            content: Any = json.loads(raw)["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as err:
            raise SituateError(f"malformed reply ({type(err).__name__}): {raw[:200]!r}") from None
        if not isinstance(content, str):
            raise SituateError(f"malformed reply: content is {type(content).__name__}")
        sentence = clean_sentence(content, self.max_words)
        if not sentence:
            raise SituateError("empty reply")
        return sentence

    def situate(
        self, doc_hash: str, chunks: list[Chunk], doc_title: str, doc_text: str = ""
    ) -> SituateResult:
        """Chunks with their situating sentence after the header (see the module docstring).

        `doc_hash` is the document's sha256 (the cache key); `doc_text` its extracted text,
        of which only the first `excerpt_chars` characters are sent. Never raises for an
        endpoint failure: see `SituateResult`.
        """
        cache = ReplyCache(self.cache_dir, doc_hash)
        result = SituateResult(chunks=[])
        in_a_row = 0
        for chunk in chunks:
            key = (chunk.content_hash, self.model, self.prompt_id)
            sentence = cache.get(key)
            if sentence is not None:
                result.cached += 1
            elif in_a_row >= self.max_consecutive_failures:
                result.failed += 1
                result.failures.append(f"{chunk.chunk_id}: not called, endpoint down")
            else:
                result.called += 1
                try:
                    sentence = self.ask(self.messages(chunk, doc_title, doc_text))
                    in_a_row = 0
                except Exception as err:  # noqa: BLE001 - a failure never stops the run
                    in_a_row += 1
                    result.failed += 1
                    result.failures.append(f"{chunk.chunk_id}: {err}")
                else:
                    try:
                        cache.put(key, sentence)
                    except OSError as err:
                        result.failures.append(f"{chunk.chunk_id}: cache not written: {err}")
            if sentence is None:
                result.chunks.append(chunk)
                continue
            situated = self.with_sentence(chunk, sentence)
            if situated is None:
                result.skipped_too_long += 1
                result.chunks.append(chunk)
            else:
                result.chunks.append(situated)
        return result

    def with_sentence(self, chunk: Chunk, sentence: str) -> Chunk | None:
        """The chunk with the sentence after its header, or None if it would not fit."""
        header = chunk.header
        if header and chunk.text.startswith(header):
            rest = chunk.text[len(header) :].removeprefix("\n")
        else:
            header, rest = "", chunk.text
        new_header = f"{header}\n{sentence}" if header else sentence
        text = f"{new_header}\n{rest}"
        tokens = self.counter.count(text)
        if tokens > self.counter.max_tokens:
            return None
        return dataclasses.replace(
            chunk,
            header=new_header,
            text=text,
            token_count=tokens,
            truncated=False,
            content_hash=content_hash(text),
        )


@dataclass(frozen=True)
class SituatorConfig:
    """Settings of the optional contextual step; `enabled` is False by default.

    `api_key` is the key's value, which the caller reads from the environment variable
    a setting names (`rag_assets.settings.secret`: only the settings read the
    environment); it is never stored in config nor shown in the repr. `cache_dir` is
    chosen by the caller, e.g. `<lake>/cache/contextual/`.
    """

    enabled: bool = False
    url: str = "http://127.0.0.1:8080/v1"
    model: str = "default"
    api_key: str | None = field(default=None, repr=False)
    timeout_s: float = 30.0
    max_words: int = 40
    excerpt_chars: int = 2000
    max_consecutive_failures: int = 5

    def build(self, counter: TokenCounter, cache_dir: Path) -> Situator | None:
        """The configured `Situator`, or None when the step is off."""
        if not self.enabled:
            return None
        return Situator(
            url=self.url,
            model=self.model,
            counter=counter,
            cache_dir=cache_dir,
            api_key=self.api_key or None,
            timeout_s=self.timeout_s,
            max_words=self.max_words,
            excerpt_chars=self.excerpt_chars,
            max_consecutive_failures=self.max_consecutive_failures,
        )
