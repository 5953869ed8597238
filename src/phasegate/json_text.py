"""JSON text as ``json.dumps(value, ensure_ascii=False)`` writes it, made faster.

Only the standard library is imported here: the SessionStart hook's index reader uses it.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False  # typing is not imported at run time: the SessionStart hook uses this
if TYPE_CHECKING:
    from typing import Any

_make_encoder: Any = getattr(json.encoder, "c_make_encoder", None)  # None without the C part
_default = json.JSONEncoder().default
_quote: Any = json.encoder.encode_basestring
_encode_slowly = json.JSONEncoder(ensure_ascii=False).encode
_FLAGS = (False, False, True)  # sort_keys, skipkeys, allow_nan: json.dumps's
#: C encoders not in use, each with the dict of the containers it is inside (empty between
#: calls). A call takes one (threads, or a signal handler's call, never share one).
_encoders: list[tuple[dict[int, Any], Any]] = []


def encode_json(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)``: the same text, with a C encoder made once
    and used again (state, journal, index and views encode many small values at every
    step; ``JSONEncoder.encode`` makes one at every call)."""
    if _make_encoder is None:
        return _encode_slowly(value)
    try:
        pair = _encoders.pop()
    except IndexError:
        markers: dict[int, Any] = {}
        pair = (markers, _make_encoder(markers, _default, _quote, None, ": ", ", ", *_FLAGS))
    markers, encoder = pair
    try:
        return "".join(encoder(value, 0))
    finally:
        if markers:  # an encoding that failed part-way leaves its containers in it
            markers.clear()
        _encoders.append(pair)
