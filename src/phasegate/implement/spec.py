"""Which plan ``phasegate implement SPEC-ID|PATH`` means, and the work item it belongs to.

``SPEC-ID`` is the start of a folder name under ``specs_dir`` (``006`` finds
``docs/specs/006-implement-orchestration/``) holding a PLAN.md; ``PATH`` is a
PLAN.md (or a folder holding one) anywhere in the repository. The work item
is named after the spec: the digits its folder name starts with (``006``),
else the folder's name.
"""

from __future__ import annotations

import re
from pathlib import Path

from phasegate.engine.item import validate_item_name
from phasegate.errors import BadInputError, NotFoundError

PLAN = "PLAN.md"


def _inside(path: Path, root: Path) -> str:
    resolved, top = path.resolve(), root.resolve()
    if resolved != top and top not in resolved.parents:
        raise BadInputError(f"{path} is outside the repository {root}")
    return resolved.relative_to(top).as_posix()


def item_name_for(plan_rel: str) -> str:
    """The work item a plan belongs to: its folder's leading digits, else its folder's name."""
    folder = Path(plan_rel).parent.name
    if not folder:
        return "plan"
    digits = re.match(r"^(\d+)(?=$|[-_. ])", folder)
    name = digits.group(1) if digits else re.sub(r"[^A-Za-z0-9._-]+", "-", folder).strip("-.")
    return validate_item_name(name or "plan")


def _by_id(root: Path, spec_id: str, specs_dir: str) -> Path:
    base = root / specs_dir
    if not base.is_dir():
        raise NotFoundError(
            f"no spec {spec_id!r}: {specs_dir}/ does not exist (give the path of a PLAN.md, "
            "or set workflows.implement.settings.specs_dir)"
        )
    found = sorted(
        p
        for p in base.iterdir()
        if p.is_dir() and (p.name == spec_id or re.match(rf"^{re.escape(spec_id)}[-_. ]", p.name))
    )
    if not found:
        known = sorted(p.name for p in base.iterdir() if (p / PLAN).is_file())
        listed = ", ".join(known[:10]) + (", ..." if len(known) > 10 else "")
        raise NotFoundError(
            f"no spec folder {specs_dir}/{spec_id}*/ (named {spec_id} or {spec_id}-...) in "
            f"{root}; specs with a PLAN.md: {listed or 'none'}"
        )
    if len(found) > 1:
        names = ", ".join(f"{specs_dir}/{p.name}" for p in found)
        raise BadInputError(
            f"spec {spec_id!r} is ambiguous ({names}); give the path of its PLAN.md"
        )
    return found[0] / PLAN


def resolve_plan(root: Path, target: str, specs_dir: str, cwd: Path | None = None) -> str:
    """The plan ``target`` names, relative to the repository (it must exist)."""
    if not target.strip():
        raise BadInputError("give a spec id (e.g. 006) or the path of a PLAN.md")
    here = cwd or Path.cwd()
    given = Path(target)
    candidates = [given] if given.is_absolute() else [here / given, root / given]
    plan: Path | None = None
    for candidate in candidates:
        if candidate.is_file():
            plan = candidate
            break
        if candidate.is_dir():
            plan = candidate / PLAN
            break
    if plan is None:
        if "/" in target or target.endswith(".md"):
            raise NotFoundError(f"{target}: no such file; the implement workflow needs a PLAN.md")
        plan = _by_id(root, target, specs_dir)
    rel = _inside(plan, root)
    if not (root / rel).is_file():
        raise NotFoundError(f"{rel}: no such file; the implement workflow needs a PLAN.md")
    return rel


def plan_title(path: Path) -> str:
    """The plan's first heading, for the work item's description."""
    try:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("#"):
                return line.lstrip("#").strip()
    except OSError:
        pass
    return ""
