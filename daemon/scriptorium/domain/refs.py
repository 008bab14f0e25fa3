"""Reference ids: opaque to callers, stable across restarts, decodable by the daemon.

A ref id encodes where a block lives (source, kind, path, anchor, anchor line) plus a short
hash of the document content it was cut from. Decoding needs no in-memory table, so a ref
survives restarts and replicas; the hash lets a fetch tell that the content changed since.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from urllib.parse import unquote

from scriptorium import limits
from scriptorium.domain.model import RefKind
from scriptorium.domain.outcomes import InvalidArgument

PREFIX = "r1."
_SEP = "\x1f"
_KIND_CODES = {RefKind.DOC: "d", RefKind.CODE: "c", RefKind.FILE: "f"}
_CODE_KINDS = {v: k for k, v in _KIND_CODES.items()}
MAX_REF_CHARS = limits.MAX_REF_CHARS


@dataclass(frozen=True, slots=True)
class Ref:
    source: str
    kind: RefKind
    path: str
    anchor: str
    line: int
    content_hash: str  # first 12 hex characters of the document's content hash

    def encode(self) -> str:
        raw = _SEP.join(
            [
                self.source,
                _KIND_CODES[self.kind],
                self.path,
                self.anchor,
                str(self.line),
                self.content_hash[:12],
            ]
        )
        return PREFIX + base64.urlsafe_b64encode(raw.encode("utf-8")).decode("ascii").rstrip("=")


def decode_ref(ref_id: str) -> Ref:
    """Parse a ref id, raising InvalidArgument for anything malformed."""
    if not ref_id.startswith(PREFIX) or len(ref_id) > MAX_REF_CHARS:
        raise InvalidArgument("malformed ref_id: not a Scriptorium reference")
    payload = ref_id[len(PREFIX) :]
    try:
        raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise InvalidArgument("malformed ref_id: undecodable") from None
    parts = raw.split(_SEP)
    if len(parts) != 6 or parts[1] not in _CODE_KINDS or not parts[0]:
        raise InvalidArgument("malformed ref_id: wrong shape")
    try:
        line = int(parts[4])
    except ValueError:
        raise InvalidArgument("malformed ref_id: bad line") from None
    if line < 0:
        raise InvalidArgument("malformed ref_id: bad line")
    return Ref(parts[0], _CODE_KINDS[parts[1]], parts[2], parts[3], line, parts[5])


def looks_like_ref(value: str) -> bool:
    return value.startswith(PREFIX)


_PRINTED_PLACE = re.compile(r"^(.+?):(\d+)(?::\d+)?:?$")


def normalize_location(raw: str) -> tuple[str, str]:
    """Validate and split a requested location into (path, fragment).

    Percent-encoding is decoded once before the checks, so an encoded ``..`` is refused too.
    A place as tools print it (``pkg/mod.py:120`` or ``pkg/mod.py:120:8``) is its line.
    """
    if len(raw) > limits.MAX_LOCATION_CHARS:
        raise InvalidArgument(f"location is longer than {limits.MAX_LOCATION_CHARS} characters")
    decoded = unquote(raw).strip()
    if "\x00" in decoded or any(ord(ch) < 32 for ch in decoded):
        raise InvalidArgument("location contains control characters")
    path, _, fragment = decoded.partition("#")
    if not fragment and "://" not in path:
        # ``path:LINE`` or ``path:LINE:COLUMN``, as compilers, linters and test runners print a
        # place: that line (``path#LLINE``).
        place = _PRINTED_PLACE.match(path)
        if place is not None:
            path, fragment = place.group(1), f"L{place.group(2)}"
    path = path.replace("\\", "/")
    if re.match(r"^[A-Za-z]:/", path) or path.startswith("//") or path.startswith("~"):
        raise InvalidArgument("absolute paths are not accepted as locations")
    path = path.strip().strip("/")
    if any(seg == ".." for seg in path.split("/")):
        raise InvalidArgument("'..' segments are not accepted in locations")
    if not path:
        raise InvalidArgument("location is empty")
    return path, fragment.strip()
