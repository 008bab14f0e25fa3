"""Small trees and configurations for end-to-end tests, written to real files."""

from __future__ import annotations

from pathlib import Path


def write(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` (making its folders); returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Write each ``files`` entry (relative path -> text) under ``root``; returns ``root``."""
    for path, text in files.items():
        write(root / path, text)
    return root


def markdown_config(path: Path, sources: dict[str, Path], server: str = "watch = false") -> Path:
    """A configuration of Markdown sources (name -> root, the first one default)."""
    blocks = [f"[server]\n{server}\n"]
    for i, (name, root) in enumerate(sources.items()):
        default = "default = true\n" if i == 0 else ""
        blocks.append(
            f'[[sources]]\nname = "{name}"\nkind = "markdown"\nroot = "{root}"\n{default}'
        )
    return write(path, "\n".join(blocks))


def docs_and_code_config(path: Path, docs: Path, code: Path, server: str = "watch = false") -> Path:
    """A configuration of one Markdown source ``docs`` and one code source ``code``, both
    default (answering bare locations)."""
    return write(
        path,
        f'[server]\n{server}\n\n[[sources]]\nname = "docs"\nkind = "markdown"\nroot = "{docs}"\n'
        f'default = true\n\n[[sources]]\nname = "code"\nkind = "code"\nroot = "{code}"\n'
        "default = true\n",
    )


def code_config_text(root: Path, ranking: str = "") -> str:
    """The text of a configuration of one code source ``code`` at ``root``, not watched, with
    the semantic retriever off and ``ranking``'s lines added to its ``[ranking]`` table."""
    return (
        f'[server]\nwatch = false\n\n[[sources]]\nname = "code"\nkind = "code"\nroot = "{root}"\n'
        f"\n[ranking]\nsemantic = false\n{ranking}"
    )
