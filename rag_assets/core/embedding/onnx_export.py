"""The ONNX graph of a sentence-transformers model's transformer, exported by
`torch.onnx.export` (the dynamo exporter; dynamic batch and sequence axes): the torch side
of the ONNX backend (`onnx_backend`), which adds pooling, prompt, truncation and the
check around it. torch is imported only when a model is exported."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from rag_assets.core.errors import UserError

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
"""The transformer inputs an export may take (a model needing any other is refused)."""


class OnnxUnsupported(UserError, ValueError):
    """The model, device or module stack has no ONNX route here."""


def export_transformer(st: Any, path: Path) -> list[str]:
    """Export the transformer of a loaded model to `path`; returns its input names."""
    import contextlib
    import inspect
    import warnings

    import torch

    hf = st[0].auto_model.eval()
    tok = st.tokenizer
    accepted = set(inspect.signature(hf.forward).parameters)
    names = [n for n in INPUTS if n in tok.model_input_names and n in accepted]
    extra = set(tok.model_input_names) - set(INPUTS)
    if "input_ids" not in names or "attention_mask" not in names or extra:
        raise OnnxUnsupported(
            f"ONNX backend: model inputs {list(tok.model_input_names)} are not supported"
        )

    class Wrapper(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.hf = hf

        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            token_type_ids: torch.Tensor | None = None,
        ) -> torch.Tensor:
            kwargs = {"input_ids": input_ids, "attention_mask": attention_mask}
            if token_type_ids is not None:
                kwargs["token_type_ids"] = token_type_ids
            return self.hf(**kwargs).last_hidden_state

    # Two texts of different lengths: the example batch has padding, so nothing in the
    # graph is specialized to an all-ones attention mask.
    example = tok(
        ["Art. 1º Esta Lei dispõe sobre o tratamento de dados pessoais.", "prazo"],
        padding=True,
        return_tensors="pt",
    )
    args = tuple(example[n] for n in names)
    axes = {0: torch.export.Dim.AUTO, 1: torch.export.Dim.AUTO}
    shapes = {n: axes for n in names}
    big = sum(p.numel() * p.element_size() for p in hf.parameters()) > 1_500_000_000
    for noisy in ("torch.onnx", "torch.export", "torch._dynamo", "onnxscript"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    # The exporter prints its progress to stdout (sent to devnull below).
    with (
        open(os.devnull, "w") as devnull,
        contextlib.redirect_stdout(devnull),
        warnings.catch_warnings(),
        torch.no_grad(),
    ):
        warnings.simplefilter("ignore")  # deprecations inside torch.export, not ours
        program = torch.onnx.export(
            Wrapper().eval(),
            args,
            dynamo=True,
            input_names=names,
            output_names=["token_embeddings"],
            dynamic_shapes=shapes,
            external_data=big,
            verbose=False,
        )
        program.save(str(path), external_data=big)
    return names
