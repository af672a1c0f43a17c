"""Nothing leaves the machine: every dependency's usage reporting is off before the
dependency is imported (this module runs first, from `rag_assets/__init__`).

- Dagster: `DAGSTER_DISABLE_TELEMETRY`, and each instance's `dagster.yaml` says so too
  (`orchestration.materialize.open_instance`).
- Hugging Face (hub, transformers, sentence-transformers): offline and no telemetry.
- ONNX Runtime (1.32 and later, on Linux too): its Microsoft 1DS reporter looks up
  `mobile.events.data.microsoft.com` once a session is made and keeps a device id and an
  event store under `~/.cache/Microsoft/DeveloperTools`; `ORT_DISABLE_TELEMETRY` stops it.
- OpenVINO: importing `openvino` starts its usage reporter (`openvino_telemetry`: a
  client id written under `~/intel`, then a forked process that sends an event to Google
  Analytics, forked after LanceDB is loaded, which makes LanceDB warn of deadlocks).
  That package is marked unimportable here, so OpenVINO takes its own no-op stand-in
  (`openvino.tools.ovc.telemetry_stub`): nothing is written, forked or sent.

Each variable is only a default: a value the user set is kept.
"""

from __future__ import annotations

import os
import sys

OFFLINE_ENV = {
    "DAGSTER_DISABLE_TELEMETRY": "1",
    "HF_HUB_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "ORT_DISABLE_TELEMETRY": "1",
}
"""Environment defaults that keep dependencies offline and quiet."""

BLOCKED_MODULES = ("openvino_telemetry",)
"""Usage reporters that are never imported: their importers fall back to a no-op."""


def no_telemetry() -> None:
    """Turn every known usage reporter off for this process and its children, before the
    libraries that start them are imported."""
    for name, value in OFFLINE_ENV.items():
        os.environ.setdefault(name, value)
    for module in BLOCKED_MODULES:
        sys.modules.setdefault(module, None)  # type: ignore[arg-type]  # import fails
