"""RAG over `trecho serve`: retrieve the top-k chunks with citations and build the prompt
an LLM answers from (send `prompt` to the model of your choice).

    trecho serve --lake data_lake &          # once; the model stays loaded
    python examples/rag.py "qual o limite de vibração da bomba?"
"""

from __future__ import annotations

import sys

from rag_assets.serve.client import TrechoClient, TrechoError, citation, context_block

question = sys.argv[1] if len(sys.argv) > 1 else "qual o limite de vibração da bomba?"
client = TrechoClient("http://127.0.0.1:8000")  # bearer token: TRECHO_SERVE_TOKEN
try:
    hits = client.search(question, k=3, expand=True)
except TrechoError as exc:  # not running, refused request: one line, the server's words
    sys.exit(f"rag.py: {exc}")

prompt = (
    "Answer the question using only the numbered sources below, and cite them as [n].\n\n"
    f"{context_block(hits)}\n\nQuestion: {question}\nAnswer:"
)
print(prompt)
print("\nSources:")
for n, hit in enumerate(hits, start=1):
    print(f"[{n}] {citation(hit)}  (score {hit['score']:.4f}, {'+'.join(hit['retrievers'])})")
