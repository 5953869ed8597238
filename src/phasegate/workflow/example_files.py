"""Example workflows shipped with phasegate, copied into a repository to start from.

An example is a workflow file and its prompt templates under
``workflow/examples/`` of the package. ``phasegate init --example NAME``
copies them to ``.phasegate/workflows/NAME.yaml`` and
``.phasegate/workflows/prompts/NAME/``, where the repository owns them: edit
them freely (``phasegate validate`` checks the result). A file already there
is never overwritten.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from phasegate.errors import BadInputError
from phasegate.workflow.sources import EXAMPLES_DIR as EXAMPLES_DIR
from phasegate.workflow.sources import example_names as example_names


@dataclass(frozen=True)
class CopiedExample:
    """What copying an example did: the files written and the files left as they were."""

    written: tuple[Path, ...]
    kept: tuple[Path, ...]


def copy_example(name: str, repo_root: Path) -> CopiedExample:
    """Copy example ``name`` into ``repo_root``'s workflows, keeping files already there."""
    from phasegate.workflow.registry import REPO_WORKFLOWS  # the loader: imported late

    source = EXAMPLES_DIR / f"{name}.yaml"
    if not source.is_file():
        known = ", ".join(example_names()) or "none"
        raise BadInputError(f"unknown example workflow {name!r} (examples: {known})")
    target_dir = repo_root / REPO_WORKFLOWS
    pairs = [(source, target_dir / source.name)]
    prompts = EXAMPLES_DIR / "prompts" / name
    pairs += [
        (template, target_dir / "prompts" / name / template.name)
        for template in sorted(prompts.glob("*.md"))
    ]
    written: list[Path] = []
    kept: list[Path] = []
    for origin, target in pairs:
        if target.exists():
            kept.append(target)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(origin.read_bytes())
        written.append(target)
    return CopiedExample(tuple(written), tuple(kept))
