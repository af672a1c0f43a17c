"""Who a server is exposed to and how it spends its threads: the token's variable and
the threads of one query's embedding (the loopback rule is `core.hosts`). Light (no
LanceDB, no torch until `query_threads` runs), below both the package face and `boot`."""

from __future__ import annotations

import os

TOKEN_ENV = "TRECHO_SERVE_TOKEN"


def query_threads(threads: int) -> None:
    """Threads torch may use to embed one query (call before the model loads).

    A server answers requests on several threads at once, so each query embedding gets
    `threads` (default 1) and concurrent requests spread over the cores. Idle OpenMP
    threads sleep instead of spinning (`OMP_WAIT_POLICY=PASSIVE`, unless set): on a
    machine shared with other work, spinning threads slow one query's embedding down
    several times over.
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import torch

    torch.set_num_threads(threads)
