"""A repository's own ``feature`` workflow whose design only warns without spec.md."""

from __future__ import annotations

from pathlib import Path


def design_without_required_spec(repo: Path) -> None:
    """The repository's own ``feature``: the built-in, its design not requiring spec.md
    (only a soft prerequisite): a spec.md deleted after specify is then a warning to
    confirm, not the block a required previous artifact made and gone since is."""
    import shutil

    from phasegate.workflow.sources import BUILTIN_DIR as source

    text = (source / "feature.yaml").read_text()
    soft = "    prerequisites: {soft: [spec.md]}\n"
    required = "    previous: spec.md\n    previous_required: true\n" + soft
    assert text.count(required) == 1  # design's
    own = repo / ".phasegate" / "workflows"
    own.mkdir(parents=True, exist_ok=True)
    (own / "feature.yaml").write_text(text.replace(required, "    previous: spec.md\n" + soft))
    shutil.copytree(source / "prompts" / "feature", own / "prompts" / "feature")
