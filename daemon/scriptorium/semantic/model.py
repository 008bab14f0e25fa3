"""Where the encoder's files are: installed into the virtualenv by ``scripts/ensure_model.sh``.

Models come only from a package registry at install time, never from a model hub at run time:
a model folder holds ``model.onnx``, ``tokenizer.json`` and ``MODEL.json`` (its name, vector
size, pooling and the prefix its queries take).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

DEFAULT_MODEL = "bge-small-en-v1.5-q"
MODEL_FILES = ("model.onnx", "tokenizer.json", "MODEL.json")


class ModelMissing(RuntimeError):
    """The encoder's files are not installed (the daemon ranks lexically and says why)."""


@dataclass(frozen=True, slots=True)
class ModelFiles:
    """One installed encoder."""

    folder: Path
    name: str
    dimensions: int
    pooling: str  # "cls" or "mean"
    query_prefix: str
    max_tokens: int

    @property
    def onnx(self) -> Path:
        return self.folder / "model.onnx"

    @property
    def tokenizer(self) -> Path:
        return self.folder / "tokenizer.json"


def models_dir() -> Path:
    """The folder ``make venv`` installs models into: ``<venv>/share/scriptorium/models``."""
    return Path(sys.prefix) / "share" / "scriptorium" / "models"


def find_model(name_or_path: str = "") -> ModelFiles:
    """The model named (a folder under :func:`models_dir`) or at a path; the default model
    when ``name_or_path`` is empty. Raises ModelMissing with what to run when absent."""
    given = name_or_path or DEFAULT_MODEL
    folder = Path(given).expanduser() if "/" in given else models_dir() / given
    missing = [name for name in MODEL_FILES if not (folder / name).is_file()]
    if missing:
        raise ModelMissing(
            f"no encoder at {folder} (missing {', '.join(missing)}); "
            "'make venv' installs it (scripts/ensure_model.sh)"
        )
    try:
        meta = json.loads((folder / "MODEL.json").read_text())
        return ModelFiles(
            folder=folder,
            name=str(meta["name"]),
            dimensions=int(meta["dimensions"]),
            pooling=str(meta.get("pooling", "cls")),
            query_prefix=str(meta.get("query_prefix", "")),
            max_tokens=int(meta.get("max_tokens", 512)),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelMissing(f"{folder / 'MODEL.json'} is unreadable ({exc})") from None
