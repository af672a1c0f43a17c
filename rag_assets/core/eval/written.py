"""Questions an LLM writes for passages of the lake (the `written` kind of the questions
drawn from it, `core.eval.drawn`): asked of any OpenAI-compatible endpoint as the
contextual step asks for its sentences (`Situator.ask`), and kept in its reply cache by
document, passage, model and prompt, so that a rerun asks nothing twice. Never required:
without an endpoint nothing is written."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rag_assets.core.chunking import ReplyCache
from rag_assets.core.eval.questions import digest

SYSTEM_PROMPT = (
    "You write evaluation questions for a search engine. Given a passage of a document, "
    "write exactly one question, in the language of the passage, that the passage answers "
    "and that a reader who has not seen it might ask. Do not copy its headings or quote "
    "long phrases. Answer with the question only."
)
USER_TEMPLATE = "Document: {title}\nPassage:\n<passage>\n{text}\n</passage>"

Ask = Callable[[list[dict[str, str]]], str]


class QuestionWriter:
    """Questions an LLM writes for passages, kept under `cache_dir` (a `ReplyCache` per
    document): a rerun asks nothing already asked. `ask` sends chat messages and returns
    the reply (the contextual step's `Situator.ask`); a failed call skips the passage,
    counted in `failures`."""

    def __init__(self, ask: Ask, model: str, cache_dir: Path) -> None:
        self.ask = ask
        self.model = model
        self.cache_dir = cache_dir
        self.prompt_id = digest(SYSTEM_PROMPT, USER_TEMPLATE)
        self.failures: list[str] = []
        self._caches: dict[str, ReplyCache] = {}  # each document's file read once

    def write(self, text: str, title: str, doc_id: str, name: str) -> str | None:
        """The question for the passage `text` of the document `doc_id` titled `title`
        (cached, else asked; None when the call failed, `name` saying which passage in
        `failures`)."""
        cache = self._caches.get(doc_id)
        if cache is None:
            cache = self._caches[doc_id] = ReplyCache(self.cache_dir, doc_id)
        key = (digest(" ".join(text.split()).casefold()), self.model, self.prompt_id)
        if (kept := cache.get(key)) is not None:
            return kept
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": USER_TEMPLATE.format(title=title, text=text.strip())},
        ]
        try:
            question = " ".join(self.ask(messages).split())
        except Exception as err:  # noqa: BLE001 - an endpoint failure never stops the eval
            self.failures.append(f"{name}: {err}")
            return None
        if question:
            cache.put(key, question)
        return question or None
