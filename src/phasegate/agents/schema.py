"""JSON schemas handed to agents, generated from the pydantic models that read the answers.

A schema written by hand drifts from the model that parses the answer: the
agent then gives an answer the schema allows and phasegate cannot read. So
each schema an agent receives (``--json-schema``, ``--output-schema``,
``response_format``) is :func:`strict_json_schema` of the model that reads it.

Strict form, as OpenAI's strict structured outputs and Claude Code's
StructuredOutput tool accept it: ``$ref`` definitions inlined, every object
``additionalProperties: false`` with all its properties required (a model
field with a default is then always given, which the model accepts too), and
``title`` / ``default`` left out. Every answer valid under the strict schema is
also valid under the model's own schema, which is what keeps the two in step
(``tests/backends/test_file_edits.py`` checks it answer by answer).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

#: Keywords dropped from a generated schema (annotations strict mode refuses or ignores).
_DROPPED = frozenset({"title", "default"})


def strict_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The strict JSON schema of ``model`` (see the module docstring)."""
    return _generated(model, strict=True)


def tool_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of ``model`` for a tool's arguments: inlined like the strict one, but
    a field with a default may be left out (as the model allows), which tool callers that
    check arguments against the schema (Gemini CLI) need."""
    return _generated(model, strict=False)


def _generated(model: type[BaseModel], *, strict: bool) -> dict[str, Any]:
    raw = model.model_json_schema()
    definitions = raw.pop("$defs", {})
    found = _strict(raw, definitions, strict)
    assert isinstance(found, dict)
    return found


def _strict(node: Any, definitions: Mapping[str, Any], strict: bool = True) -> Any:
    if isinstance(node, list):
        return [_strict(item, definitions, strict) for item in node]
    if not isinstance(node, Mapping):
        return node
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        # A field's own keywords (its description) go with the definition it refers to.
        own = {k: v for k, v in node.items() if k != "$ref"}
        return _strict({**definitions[name], **own}, definitions, strict)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED:
            continue
        if key == "properties" and isinstance(value, Mapping):
            # Property names are data, not keywords: a field named "title" stays.
            out[key] = {name: _strict(sub, definitions, strict) for name, sub in value.items()}
        else:
            out[key] = _strict(value, definitions, strict)
    if out.get("type") == "object" and isinstance(out.get("properties"), Mapping):
        if strict:
            out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out
