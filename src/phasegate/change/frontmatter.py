"""YAML frontmatter of the change's markdown files (tasks.md, proposal.md, REVIEW.md)."""

from __future__ import annotations

import io
from typing import Any

from phasegate.yaml_errors import yaml_error_column, yaml_error_detail

_FENCE = "---"


def split_frontmatter(text: str) -> tuple[dict[str, Any] | None, str, str | None]:
    """``(frontmatter, body, problem)``.

    ``frontmatter`` is ``None`` when the text has none, or when it cannot be
    read as a YAML mapping (``problem`` then says why); ``body`` is the text
    after it (the whole text when there is none).
    """
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].removeprefix("\ufeff").strip() != _FENCE:  # a BOM is not text
        return None, text, None
    for index in range(1, len(lines)):
        if lines[index].strip() == _FENCE:
            raw = "".join(lines[1:index])
            body = "".join(lines[index + 1 :])
            return _parse(raw, body)
    return None, text, "the frontmatter's closing '---' is missing"


def _parse(raw: str, body: str) -> tuple[dict[str, Any] | None, str, str | None]:
    from ruamel.yaml import YAML

    try:
        data = YAML(typ="safe", pure=True).load(raw)
    except Exception as exc:  # any YAML failure means the same to the reader
        # The frontmatter's text starts on the file's second line, after the opening fence.
        line, problem = yaml_error_detail(exc, first_line=2)
        column = yaml_error_column(exc)
        where = f" on line {line}" if line is not None else ""
        where += f", column {column}" if line is not None and column is not None else ""
        return None, body, f"invalid YAML frontmatter{where}: {problem[:200]}"
    if data is None:
        return {}, body, None
    if not isinstance(data, dict):
        return None, body, "the frontmatter is not a YAML mapping"
    return data, body, None


def join_frontmatter(data: dict[str, Any], body: str) -> str:
    """``data`` as a frontmatter block followed by ``body``."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    buffer = io.StringIO()
    yaml.dump(data, buffer)
    return f"{_FENCE}\n{buffer.getvalue()}{_FENCE}\n{body}"
