"""RAG over `trecho serve`: retrieve the top-k chunks with citations and build the prompt
an LLM answers from (send `prompt` to the model of your choice).

    trecho serve --lake data_lake &          # once; the model stays loaded
    python examples/rag.py "qual o limite de vibração da bomba?"
    python examples/rag.py --url http://10.0.0.5:8010 "prazo de reembolso?"   # or TRECHO_URL

No hit means the documents hold no answer (every hit's cosine was under the server's
min_score): the example says so instead of building a prompt.
"""

from __future__ import annotations

import argparse
import sys

from rag_assets.serve.client import TrechoClient, TrechoError, citation, context_block, server_url

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("question", nargs="?", default="qual o limite de vibração da bomba?")
parser.add_argument(
    "--url", default=None, help=f"the server (default: $TRECHO_URL, else {server_url(None)})"
)
parser.add_argument("-k", type=int, default=3, help="passages to retrieve (default: 3)")
args = parser.parse_args()
question = args.question
client = TrechoClient(args.url)  # bearer token: TRECHO_SERVE_TOKEN
try:
    hits = client.search(question, k=args.k, expand=True)
except TrechoError as exc:  # not running, refused request: one line, the server's words
    sys.exit(f"rag.py: {exc}")
if not hits:  # say so, as the LLM should: no source, no answer
    print(f"The documents at {client.base_url} hold no answer to {question!r}.")
    sys.exit(0)

prompt = (
    "Answer the question using only the numbered sources below, and cite them as [n].\n\n"
    f"{context_block(hits)}\n\nQuestion: {question}\nAnswer:"
)
print(prompt)
print("\nSources:")
for n, hit in enumerate(hits, start=1):
    cosine = f", cosine {hit['cosine']:.4f}" if hit.get("cosine") is not None else ""
    retrievers = "+".join(hit["retrievers"])
    print(f"[{n}] {citation(hit)}  (score {hit['score']:.4f}{cosine}, {retrievers})")
