"""Texts to unit vectors: the ``Encoder`` protocol and the ONNX encoder that ships.

A plugin may supply another encoder (a bigger model, a GPU service) through the
``scriptorium_embedder`` hook; it only has to honour this protocol.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from scriptorium.semantic.model import ModelFiles

# Passages are encoded in batches of this many (onnxruntime's throughput flattens past it).
BATCH = 16


@runtime_checkable
class Encoder(Protocol):
    """What the semantic retriever needs of a model: one vector space for queries and passages.

    ``name`` identifies the vectors on disk: a different name never reuses another's vectors.
    Vectors are float32 and of unit length, so a dot product is the cosine.
    """

    name: str
    dimensions: int

    def passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def query(self, text: str) -> np.ndarray: ...


class OnnxEncoder:
    """A BERT-style encoder run in-process by onnxruntime with its own tokenizer.

    Two sessions: the one for passages, made in the thread that encodes them, so its worker
    threads inherit that thread's lowered priority, and one for queries, made on first use in
    a request thread, so a search is never queued behind a batch of passages.
    """

    def __init__(
        self,
        model: ModelFiles,
        *,
        passage_tokens: int = 256,
        query_tokens: int = 0,
        threads: int = 0,
    ) -> None:
        from tokenizers import Tokenizer

        self.model = model
        self.name = f"{model.name}/{passage_tokens}"
        self.dimensions = model.dimensions
        self.passage_tokens = min(passage_tokens, model.max_tokens)
        # A query may read more than a passage (a pasted problem); 0: as many as a passage.
        self.query_tokens = min(query_tokens or self.passage_tokens, model.max_tokens)
        self.threads = threads or max(1, min(2, os.cpu_count() or 1))
        self._tokenizer = Tokenizer.from_file(str(model.tokenizer))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        self._sessions: dict[str, object] = {}
        self._lock = threading.Lock()

    def _session(self, role: str, threads: int):
        session = self._sessions.get(role)
        if session is None:
            import onnxruntime as ort

            with self._lock:
                session = self._sessions.get(role)
                if session is None:
                    options = ort.SessionOptions()
                    options.intra_op_num_threads = threads
                    options.inter_op_num_threads = 1
                    options.log_severity_level = 3
                    # A batch of passages needs tens of MB of activations once; an arena
                    # would keep them for the daemon's life.
                    options.enable_cpu_mem_arena = role != "passages"
                    if role != "passages":
                        # Pre-packed weights are a second copy of the model (~19 MB for
                        # bge-small) kept for the daemon's life; one query does not need them.
                        options.add_session_config_entry("session.disable_prepacking", "1")
                    session = ort.InferenceSession(
                        str(self.model.onnx), options, providers=["CPUExecutionProvider"]
                    )
                    self._sessions[role] = session
        return session

    def _ids(self, texts: Sequence[str], limit: int) -> tuple[np.ndarray, np.ndarray]:
        encodings = self._tokenizer.encode_batch(list(texts))
        rows = [e.ids[: limit - 1] + ([e.ids[-1]] if len(e.ids) > limit else []) for e in encodings]
        width = max(len(r) for r in rows)
        ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for at, row in enumerate(rows):
            ids[at, : len(row)] = row
            mask[at, : len(row)] = 1
        return ids, mask

    def _run(self, session, texts: Sequence[str], limit: int) -> np.ndarray:
        ids, mask = self._ids(texts, limit)
        feeds = {"input_ids": ids, "attention_mask": mask}
        names = {i.name for i in session.get_inputs()}
        if "token_type_ids" in names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, feeds)[0]
        if self.model.pooling == "mean":
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        else:
            pooled = hidden[:, 0, :]
        pooled = pooled.astype(np.float32)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts``, each cut to the first ``passage_tokens`` tokens. Texts
        of like length are batched together, so little of a batch is padding."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        session = self._session("passages", self.threads)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            chunk = order[start : start + BATCH]
            out[chunk] = self._run(session, [texts[i] for i in chunk], self.passage_tokens)
        return out

    def release(self) -> None:
        """Drop the passage session (made again for the next pass): between passes the
        daemon holds only what queries need."""
        with self._lock:
            self._sessions.pop("passages", None)

    def query(self, text: str) -> np.ndarray:
        """The unit vector of a query (with the model's query prefix)."""
        session = self._session("queries", self.threads)
        return self._run(session, [self.model.query_prefix + text], self.query_tokens)[0]
