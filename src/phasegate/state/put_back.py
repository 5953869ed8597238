"""What a file held, copied aside before phasegate puts it back.

A workflow's view puts back what a call may not change (the team workflow's
``tasks.yaml`` fields, the feature workflow's artifacts of other phases). A
person's edit made while the call ran cannot be told from the agent's, so what
the file held is first copied to the item's ``put-back/`` folder, numbered
(``spec-1.md``, then ``spec-2.md``...; a copy is never overwritten), and the
message names the copy.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

#: The item's folder where what a file held is copied before it is put back.
PUT_BACK = "put-back"


def keep_copy(folder: Path, name: str, shown: str) -> str:
    """Copy what ``folder / name`` holds to the next free ``put-back/<name>`` numbered
    ``<stem>-N<suffix>`` in ``folder`` (the item's folder; a copy is never overwritten),
    before it is put back; that copy as shown in messages (``shown``: the item's folder as
    shown, ending in ``/``), or "" when there is nothing to copy or it cannot be."""
    path = folder / name
    try:
        if path.is_symlink() or not path.is_file():
            return ""
        data = path.read_bytes()
    except OSError:
        return ""
    where = Path(PUT_BACK, name).parent
    target = folder / where
    stem, suffix = path.stem, path.suffix
    pattern = re.compile(rf"{re.escape(stem)}-(\d+){re.escape(suffix)}")
    try:
        for part in (where, *where.parents[:-1]):
            if (folder / part).is_symlink():
                return ""  # never written through a link (it could lead anywhere)
        target.mkdir(parents=True, exist_ok=True)
        taken = [int(m.group(1)) for n in os.listdir(target) if (m := pattern.fullmatch(n))]
        number = max(taken, default=0)
        while True:
            number += 1
            copy = f"{stem}-{number}{suffix}"
            try:
                fd = os.open(target / copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                continue
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            return f"{shown}{(where / copy).as_posix()}"
    except OSError:
        return ""


def copied_words(where: str) -> str:
    """The words naming a copy made by :func:`keep_copy` ("" for none)."""
    return f"; what it held is copied to {where}" if where else ""
