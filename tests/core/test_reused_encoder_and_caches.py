"""What is kept from one call to the next gives the same results as doing the work afresh:
the JSON encoder used again after a failed encoding, from several threads; the redaction
of a dict's strings already redacted once; a crash point armed after the process started."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from typing import Any

import pytest

from phasegate.redact import STRUCTURAL_KEYS, Redactor
from phasegate.state.journal import encode_json


def test_the_encoder_after_a_failed_encoding_encodes_the_same_containers() -> None:
    inner: list[Any] = [1, 2]
    shared: dict[str, Any] = {"k": inner, "bad": None}
    for bad in ({1, 2}, object()):
        shared["bad"] = bad
        inner.append(bad)
        with pytest.raises(TypeError):
            encode_json({"a": shared})
        # The containers the failed encoding was inside are not taken for a loop now.
        shared["bad"] = None
        inner.pop()
        assert encode_json({"again": shared}) == json.dumps({"again": shared})
        assert encode_json([shared, inner]) == json.dumps([shared, inner])
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        encode_json(loop)
    assert encode_json([shared]) == json.dumps([shared])


def test_threads_encoding_the_same_values_at_once_get_json_dumps_text() -> None:
    shared = {"usage": {"input": 1, "cost": 0.5}, "issues": [{"severity": "blocker"}] * 3}
    values = [shared, [shared, shared], {"ü": "naïve ✅", "n": None}, "text", 1.5]
    expected = [json.dumps(v, ensure_ascii=False) for v in values]
    failures: list[str] = []

    def work() -> None:
        for _ in range(300):
            for value, text in zip(values, expected, strict=True):
                if encode_json(value) != text:
                    failures.append(text)
            with pytest.raises(TypeError):
                encode_json([shared, {1}])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def _reference(redactor: Redactor, value: dict[Any, Any]) -> dict[Any, Any]:
    """A mapping redacted key by key, as :meth:`Redactor.field` says."""
    return {k: redactor.field(k, v) for k, v in value.items()}


def test_a_dicts_strings_redact_the_same_the_first_time_and_after() -> None:
    secret = "approved-and-secret"
    token = "ghp" + "_" + "0123456789abcdefghijABCDEFGHIJ"
    record = {
        "status": secret,  # phasegate's own word under a structural key: kept
        "text": secret,  # free text: masked
        "summary": f"pushed {token}",
        "node": f"n {token}",
        "stage": "review",
        "nested": {"status": secret, "note": secret, "n": 1, "ok": True, "none": None},
        "list": [secret, {"verdict": secret}],
        "label": [secret, "x"],
        "cost": 0.5,
    }
    assert {"status", "node", "stage", "verdict", "label"} <= STRUCTURAL_KEYS
    redactor = Redactor([secret], use_environ=False)
    fresh = Redactor([secret], use_environ=False)
    first = redactor.data(record)
    second = redactor.data(record)  # every string is remembered now
    assert first == second == _reference(fresh, record)
    assert first["status"] == secret and first["text"] == "[REDACTED]"
    assert first["nested"] == {
        "status": secret,
        "note": "[REDACTED]",
        "n": 1,
        "ok": True,
        "none": None,
    }
    assert token not in json.dumps(second)
    # A string remembered under a structural key is not taken for free text, nor the reverse.
    other = Redactor([secret], use_environ=False)
    assert other.data({"text": secret})["text"] == "[REDACTED]"
    assert other.data({"status": secret})["status"] == secret
    assert other.data({"text": secret})["text"] == "[REDACTED]"


def test_a_crash_point_armed_after_start_kills_and_one_disarmed_does_not() -> None:
    script = (
        "import os\n"
        "from phasegate.faults import crash_point\n"
        "crash_point('a.point')\n"
        "os.environ['PHASEGATE_CRASH_AT'] = 'a.point@2'\n"
        "crash_point('a.point')\n"
        "del os.environ['PHASEGATE_CRASH_AT']\n"
        "crash_point('a.point')\n"
        "print('passed', flush=True)\n"
        "os.environ['PHASEGATE_CRASH_AT'] = 'a.point@2'\n"
        "crash_point('other.point')\n"
        "crash_point('a.point')\n"
        "print('not reached', flush=True)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PHASEGATE_CRASH_AT"}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == -signal.SIGKILL
    assert done.stdout == "passed\n"
