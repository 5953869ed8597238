"""The create_review schema agents are shown is generated from the model that reads their
answer: an answer the schema accepts always parses, and one the model refuses the schema
refuses too (an empty summary or description, a path out of the repository)."""

from __future__ import annotations

import itertools
import json
from typing import Any

import jsonschema
from pydantic import ValidationError

from phasegate.change.review import CREATE_REVIEW_SCHEMA, ReviewSubmission

STRINGS = ["", "x", "src/app.py", "../escape.py", "a/../../b.py", "/etc/passwd", "..hidden.py"]


def _values(schema: dict[str, Any]) -> list[Any]:
    """Values for one schema node: valid ones and the boundary cases around them."""
    if "enum" in schema:
        return [*schema["enum"], "BOGUS"]
    kind = schema.get("type")
    if kind == "string":
        return STRINGS
    if kind == "integer":
        return [0, 1, 42]
    if kind == "boolean":
        return [True, False, "yes"]
    if kind == "array":
        items = _values(schema["items"])
        return [[], [items[0]], items[:3], items[-2:]]
    if kind == "object":
        options = {name: _values(sub) for name, sub in schema["properties"].items()}
        longest = max(len(o) for o in options.values())
        answers = [
            {name: o[(index * (n + 1)) % len(o)] for n, (name, o) in enumerate(options.items())}
            for index in range(longest * 2)
        ]
        # Every combination of valid-looking leaves too, for the small objects.
        if len(options) <= 4:
            answers += [
                dict(zip(options, combo, strict=True))
                for combo in itertools.islice(itertools.product(*options.values()), 400)
            ]
        return answers
    raise AssertionError(f"unexpected schema node {schema}")


def _schema_accepts(answer: Any) -> bool:
    try:
        jsonschema.validate(answer, CREATE_REVIEW_SCHEMA)
    except jsonschema.ValidationError:
        return False
    return True


def _model_accepts(answer: Any) -> bool:
    try:
        ReviewSubmission.model_validate_json(json.dumps(answer))
    except ValidationError:
        return False
    return True


def _findings() -> list[Any]:
    return _values(CREATE_REVIEW_SCHEMA["properties"]["findings"]["items"])


def test_every_create_review_answer_the_schema_accepts_parses() -> None:
    """E3 (schemas generated from the models): over boundary answers, the schema and the
    model that reads the answer agree, both ways."""
    top = _values(CREATE_REVIEW_SCHEMA)
    findings = _findings()
    answers = top + [
        {
            "change_id": "add-oauth",
            "verdict": "NEEDS_FIX",
            "summary": "checked",
            "findings": [finding],
            "tests_run": [],
        }
        for finding in findings
    ]
    accepted = [a for a in answers if _schema_accepts(a)]
    refused = [a for a in answers if not _schema_accepts(a)]
    assert len(accepted) >= 20 and len(refused) >= 20
    for answer in answers:
        assert _schema_accepts(answer) == _model_accepts(answer), answer


def test_the_schema_refuses_what_the_model_refuses_by_name() -> None:
    """The cases that once passed the hand-written schema and then failed to parse."""
    good = {
        "change_id": "add-oauth",
        "verdict": "NEEDS_FIX",
        "summary": "checked",
        "findings": [{"severity": "high", "file": "src/a.py", "line": 3, "description": "bug"}],
        "tests_run": [{"command": "pytest", "passed": True, "summary": ""}],
    }
    assert _schema_accepts(good) and _model_accepts(good)
    spoiled: list[tuple[str, Any]] = [
        ("summary", ""),
        ("findings", [{**good["findings"][0], "description": ""}]),
        ("findings", [{**good["findings"][0], "file": ""}]),
        ("findings", [{**good["findings"][0], "file": "../outside.py"}]),
        ("findings", [{**good["findings"][0], "file": "/abs/outside.py"}]),
        ("tests_run", [{"command": "", "passed": True, "summary": ""}]),
    ]
    for field, value in spoiled:
        answer = {**good, field: value}
        assert not _model_accepts(answer), answer
        assert not _schema_accepts(answer), answer
