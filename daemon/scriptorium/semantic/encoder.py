"""Texts to unit vectors: the ``Encoder`` protocol and the ONNX encoder that ships.

A plugin may supply another encoder (a bigger model, a GPU service) through the
``scriptorium_embedder`` hook; it only has to honour this protocol.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol, runtime_checkable

import numpy as np

from scriptorium.semantic.model import ModelFiles

# What the vectors on disk were made by, beyond the model and its token limit: passages encoded
# one at a time (a batch's int8 activations share one quantization scale, so a passage
# encoded beside others was not the vector it gets alone).
PASSAGE_MODE = "alone"


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

    A passage's vector is a function of its text alone: passages are encoded one at a time,
    never in a batch (the int8 model quantizes a batch's activations with one scale, so a
    batch changes its members' vectors), so a tree reached through edits holds the vectors a
    fresh build makes. Throughput comes from ``threads`` workers, each running its own
    single-threaded session; the workers are started by the thread that encodes, so they
    inherit its lowered priority. Queries have their own session, made on first use in a
    request thread, so a search is never queued behind passages.
    """

    def __init__(
        self,
        model: ModelFiles,
        *,
        passage_tokens: int = 256,
        query_tokens: int = 0,
        long_tokens: int = 0,
        threads: int = 0,
    ) -> None:
        from tokenizers import Tokenizer

        self.model = model
        self.dimensions = model.dimensions
        self.passage_tokens = min(passage_tokens, model.max_tokens)
        # A passage longer than passage_tokens is read a second time, up to long_tokens, and
        # gets the mean of its two readings (0, or no more than passage_tokens: one reading).
        long_tokens = min(long_tokens, model.max_tokens)
        self.long_tokens = long_tokens if long_tokens > self.passage_tokens else 0
        readings = f"{passage_tokens}+{self.long_tokens}" if self.long_tokens else passage_tokens
        self.name = f"{model.name}/{readings}/{PASSAGE_MODE}"
        # A query may read more than a passage (a pasted problem); 0: as many as a passage.
        self.query_tokens = min(query_tokens or self.passage_tokens, model.max_tokens)
        self.threads = threads or max(1, min(2, os.cpu_count() or 1))
        self._tokenizer = Tokenizer.from_file(str(model.tokenizer))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        self._sessions: dict[str, object] = {}
        self._lock = threading.Lock()
        self._workers: ThreadPoolExecutor | None = None
        self._local = threading.local()

    def _new_session(self, threads: int, *, passages: bool):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        # A passage's activations are needed once; an arena would keep them for the
        # daemon's life.
        options.enable_cpu_mem_arena = not passages
        if not passages:
            # Pre-packed weights are a second copy of the model (~19 MB for bge-small)
            # kept for the daemon's life; one query does not need them.
            options.add_session_config_entry("session.disable_prepacking", "1")
        return ort.InferenceSession(
            str(self.model.onnx), options, providers=["CPUExecutionProvider"]
        )

    def _query_session(self):
        session = self._sessions.get("queries")
        if session is None:
            with self._lock:
                session = self._sessions.get("queries")
                if session is None:
                    session = self._sessions["queries"] = self._new_session(
                        self.threads, passages=False
                    )
        return session

    def _ids(self, texts: Sequence[str], limit: int) -> tuple[np.ndarray, np.ndarray]:
        encodings = self._tokenizer.encode_batch(list(texts))
        return self._cut([e.ids for e in encodings], limit)

    @staticmethod
    def _cut(encoded: Sequence[Sequence[int]], limit: int) -> tuple[np.ndarray, np.ndarray]:
        """Token ids and mask of each text's first ``limit`` tokens (its last, the separator,
        kept)."""
        rows = [list(e[: limit - 1]) + ([e[-1]] if len(e) > limit else []) for e in encoded]
        width = max(len(r) for r in rows)
        ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for at, row in enumerate(rows):
            ids[at, : len(row)] = row
            mask[at, : len(row)] = 1
        return ids, mask

    def _run(self, session, texts: Sequence[str], limit: int) -> np.ndarray:
        return self._pooled(session, *self._ids(texts, limit))

    def _pooled(self, session, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
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
        """Unit vectors of ``texts``, each cut to the first ``passage_tokens`` tokens (a
        longer one also read up to ``long_tokens``) and encoded on its own (the same text
        always gets the same vector)."""
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        if self._workers is None:
            self._workers = ThreadPoolExecutor(self.threads, thread_name_prefix="encoder")
        for at, row in enumerate(self._workers.map(self._passage, texts)):
            out[at] = row
        return out

    def _passage(self, text: str) -> np.ndarray:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = self._new_session(1, passages=True)
        tokens = self._tokenizer.encode(text).ids
        vector = self._pooled(session, *self._cut([tokens], self.passage_tokens))[0]
        if not self.long_tokens or len(tokens) <= self.passage_tokens:
            return vector
        # Past its first passage_tokens, a section's later text (the parameters below an
        # introduction, the example after the signature) answers questions too: a longer
        # reading alone ranks those first but moves others out of the first five (journal
        # 2026-12-07, passage lengths); the mean of both readings kept every set level or
        # better.
        longer = self._pooled(session, *self._cut([tokens], self.long_tokens))[0]
        mean = vector + longer
        return mean / max(float(np.linalg.norm(mean)), 1e-12)

    def release(self) -> None:
        """Stop the passage workers and drop their sessions (made again for the next pass):
        between passes the daemon holds only what queries need."""
        workers, self._workers = self._workers, None
        if workers is not None:
            workers.shutdown(wait=True)
        self._local = threading.local()

    def query(self, text: str) -> np.ndarray:
        """The unit vector of a query (with the model's query prefix)."""
        session = self._query_session()
        return self._run(session, [self.model.query_prefix + text], self.query_tokens)[0]
