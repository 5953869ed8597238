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
    raw = model.model_json_schema()
    definitions = raw.pop("$defs", {})
    strict = _strict(raw, definitions)
    assert isinstance(strict, dict)
    return strict


def _strict(node: Any, definitions: Mapping[str, Any]) -> Any:
    if isinstance(node, list):
        return [_strict(item, definitions) for item in node]
    if not isinstance(node, Mapping):
        return node
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        # A field's own keywords (its description) go with the definition it refers to.
        own = {k: v for k, v in node.items() if k != "$ref"}
        return _strict({**definitions[name], **own}, definitions)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED:
            continue
        if key == "properties" and isinstance(value, Mapping):
            # Property names are data, not keywords: a field named "title" stays.
            out[key] = {name: _strict(sub, definitions) for name, sub in value.items()}
        else:
            out[key] = _strict(value, definitions)
    if out.get("type") == "object" and isinstance(out.get("properties"), Mapping):
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out
