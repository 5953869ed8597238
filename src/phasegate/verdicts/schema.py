"""JSON schemas handed to agents, generated from the pydantic models that read the answers.

The schema an agent sees and the model that validates its answer can then never
disagree: every constraint of the model (required fields, enums, minimum
lengths) is in the schema. The result is written for strict structured-output
modes (OpenAI's, Codex's): every property is required, no extra properties,
no ``$ref``, and optional fields are nullable instead of absent.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

#: Each model's schema, generated once (pydantic takes milliseconds per schema) and kept
#: as JSON text, so every caller gets a fresh copy it may change.
_GENERATED: dict[type[BaseModel], str] = {}


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of ``model``, inlined and made strict-mode friendly."""
    text = _GENERATED.get(model)
    if text is None:
        raw = model.model_json_schema()
        definitions = raw.pop("$defs", {})
        text = json.dumps(_strict(_inline(raw, definitions)))
        _GENERATED[model] = text
    strict: dict[str, Any] = json.loads(text)
    return strict


def _inline(node: Any, definitions: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            name = str(node["$ref"]).rsplit("/", 1)[-1]
            return _inline(definitions[name], definitions)
        return {k: _inline(v, definitions) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, definitions) for v in node]
    return node


_DROPPED = {"title", "default", "description_", "examples"}


def _strict(node: Any) -> Any:
    if isinstance(node, list):
        return [_strict(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _strict(v) for k, v in node.items() if k not in _DROPPED}
    if "anyOf" in out and all(isinstance(o, dict) for o in out["anyOf"]):
        types = [o.get("type") for o in out["anyOf"]]
        if len(out["anyOf"]) == 2 and "null" in types and all(len(o) == 1 for o in out["anyOf"]):
            # Optional[str] -> {"type": ["string", "null"]}: accepted by every strict mode.
            other = next(t for t in types if t != "null")
            out.pop("anyOf")
            out["type"] = [other, "null"]
    if out.get("type") == "object" and "properties" in out:
        out["additionalProperties"] = False
        out["required"] = list(out["properties"])
    return out
