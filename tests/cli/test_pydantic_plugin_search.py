"""pydantic looks for plug-ins of its own (``importlib.metadata.entry_points``, reading every
installed distribution's metadata) only when one may be installed: ``status NAME``,
``status --json`` and ``run`` start without that search, and a distribution publishing a
pydantic plug-in still has it loaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo, make_repo

from phasegate.agents.scripted import ScriptedBackend
from phasegate.engine.runner import RunOptions

#: Runs the CLI counting the calls of importlib.metadata.entry_points (pydantic's search).
CODE = """
import contextlib, io, json, sys
import importlib.metadata as metadata
searched = []
real = metadata.entry_points
def counted(*args, **kwargs):
    searched.append(kwargs.get("group"))
    return real(*args, **kwargs)
metadata.entry_points = counted
from phasegate.cli import main
shown = io.StringIO()
with contextlib.redirect_stdout(shown):
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "searched": searched, "out": shown.getvalue(),
                  "plugin": "fake_pydantic_plugin" in sys.modules}))
"""


def _phasegate(root: Path, *args: str, pythonpath: Path | None = None) -> dict[str, object]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(pythonpath), env.get("PYTHONPATH", "")])
    env.pop("PYDANTIC_DISABLE_PLUGINS", None)
    done = subprocess.run(
        [sys.executable, "-c", CODE, *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def _repo(tmp_path: Path) -> Path:
    repo = make_repo(init_repo(tmp_path / "repo"))
    repo.new("first", description="Item first")
    options = RunOptions(until="brainstorm", yes=True)
    backend = ScriptedBackend(script=approving_script())
    repo.run("first", backends={"default": backend}, options=options)
    return repo.root


def test_status_and_run_start_without_pydantic_searching_for_plugins(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    for args in (
        ("status", "first"),
        ("status", "--json"),
        ("status", "first", "--json"),
        ("run", "first", "--until", "brainstorm"),
    ):
        found = _phasegate(root, *args)
        assert found["code"] == 0, args
        assert "first" in str(found["out"]) or "already complete" in str(found["out"]), args
        assert found["searched"] == [], args


def test_a_pydantic_plugin_installed_is_still_loaded(tmp_path: Path) -> None:
    """A distribution publishing a pydantic plug-in: pydantic searches and loads it as
    it always did, and the command's output is the same."""
    root = _repo(tmp_path)
    plain = _phasegate(root, "status", "first", "--json")
    site = tmp_path / "site"
    info = site / "fake_pydantic_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: fake-pydantic-plugin\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text("[pydantic]\nfake = fake_pydantic_plugin:plugin\n")
    (site / "fake_pydantic_plugin.py").write_text(
        "class _Plugin:\n"
        "    def new_schema_validator(self, *args, **kwargs):\n"
        "        return None, None, None\n"
        "plugin = _Plugin()\n"
    )
    found = _phasegate(root, "status", "first", "--json", pythonpath=site)
    assert found["code"] == 0
    assert "pydantic" in list(found["searched"])  # type: ignore[arg-type]
    assert found["plugin"] is True
    assert found["out"] == plain["out"]


#: Prints the modules ``phasegate *argv`` imported.
MODULES = """
import contextlib, io, json, sys
from phasegate.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def test_status_and_run_import_no_package_metadata_reader(tmp_path: Path) -> None:
    """Without pydantic's search, nothing imports importlib.metadata (nor the email
    parser it reads metadata with)."""
    root = _repo(tmp_path)
    for args in (
        ("status", "first"),
        ("status", "--json"),
        ("run", "first", "--until", "brainstorm"),
    ):
        done = subprocess.run(
            [sys.executable, "-c", MODULES, *args],
            cwd=root,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
            check=True,
        )
        found = json.loads(done.stdout.strip().splitlines()[-1])
        assert found["code"] == 0, args
        assert [m for m in found["modules"] if m in ("importlib.metadata", "email")] == [], args


def test_pydantic_asking_its_loader_for_another_name_gets_the_real_one() -> None:
    """A name of pydantic's plug-in loader the stand-in does not have loads pydantic's own
    loader, which then answers for good."""
    code = (
        "import sys\n"
        "import phasegate.config\n"
        "import pydantic.plugin._loader as stand_in\n"
        "assert list(stand_in.get_plugins()) == []\n"
        "found = stand_in.warnings\n"
        "import pydantic.plugin._loader as real\n"
        "assert real is not stand_in and real.warnings is found\n"
        "assert sys.modules['pydantic.plugin._loader'] is real\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "ok"
