"""Questions an LLM writes for passages of the lake (the `written` kind of the questions
drawn from it, `core.eval.drawn`): asked of any OpenAI-compatible endpoint, as the
contextual step asks for its sentences, and kept by passage, model and prompt so that a
rerun asks nothing twice. Never required: without an endpoint nothing is written."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

SYSTEM_PROMPT = (
    "You write evaluation questions for a search engine. Given a passage of a document, "
    "write exactly one question, in the language of the passage, that the passage answers "
    "and that a reader who has not seen it might ask. Do not copy its headings or quote "
    "long phrases. Answer with the question only."
)
USER_TEMPLATE = "Document: {title}\nPassage:\n<passage>\n{text}\n</passage>"


def _digest(*parts: object) -> str:
    return hashlib.sha1(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()[:12]


Ask = Callable[[list[dict[str, str]]], str]


class QuestionWriter:
    """Questions an LLM writes for units, kept in a JSON-lines cache by (unit text digest,
    model, prompt): a rerun asks nothing already asked. `ask` sends chat messages and
    returns the reply (the contextual step's `Situator.ask`); a failed call skips the
    unit, counted in `failures`."""

    def __init__(self, ask: Ask, model: str, cache: Path) -> None:
        self.ask = ask
        self.model = model
        self.cache = cache
        self.prompt_id = _digest(SYSTEM_PROMPT, USER_TEMPLATE)
        self.failures: list[str] = []
        self._kept: dict[str, str] = {}
        if cache.is_file():
            for line in cache.read_text(encoding="utf-8").splitlines():
                try:
                    item = json.loads(line)
                    self._kept[str(item["key"])] = str(item["question"])
                except (ValueError, KeyError, TypeError):
                    continue  # a torn line of an interrupted run: asked again

    def write(self, text: str, title: str, name: str) -> str | None:
        """The question for the passage `text` of the document `title` (cached, else asked;
        None when the call failed, `name` saying which passage in `failures`)."""
        key = _digest(" ".join(text.split()).casefold(), self.model, self.prompt_id)
        if key in self._kept:
            return self._kept[key]
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {
                "role": "user",
                "content": USER_TEMPLATE.format(title=title, text=text.strip()),
            },
        ]
        try:
            question = " ".join(self.ask(messages).split())
        except Exception as err:  # noqa: BLE001 - an endpoint failure never stops the eval
            self.failures.append(f"{name}: {err}")
            return None
        if not question:
            return None
        self._kept[key] = question
        self.cache.parent.mkdir(parents=True, exist_ok=True)
        with self.cache.open("a", encoding="utf-8") as out:
            out.write(json.dumps({"key": key, "question": question}, ensure_ascii=False) + "\n")
        return question
