"""`phasegate archive` of a change whose spec file was deleted after the change wrote it:
refused (exit 4) naming the file, nothing merged and nothing moved, instead of archiving
the approved change as "no spec changes" and losing what its spec changed. Restored, it
archives; dropped from proposal.md's specs list on purpose, it archives without it. A
deleted merge base (.base/specs/) is named too, with how to restore it, instead of every
requirement being reported as a conflict the change never made."""

from __future__ import annotations

import subprocess
from pathlib import Path

from change_helpers import complete, git

from cli_process import run_cli
from phasegate.errors import ExitCode


def _completed(repo: Path) -> tuple[Path, str]:
    """add-oauth complete, its two specs written; the deleted one and its text."""
    complete(repo, "add-oauth")
    spec = repo / "changes/add-oauth/specs/session.md"
    text = spec.read_text()
    spec.unlink()
    return spec, text


def test_a_deleted_spec_refuses_the_archive_until_restored(repo: Path) -> None:
    spec, text = _completed(repo)

    refused = run_cli(repo, "archive", "add-oauth")
    assert refused.returncode == ExitCode.BLOCKED, refused.stdout + refused.stderr
    error = refused.stderr.strip().splitlines()[-1]
    assert error.startswith("phasegate: error: cannot archive add-oauth: "), error
    assert "changes/add-oauth/specs/session.md" in error, error
    assert "missing" in error and "nothing was written" in error, error
    assert error.endswith("then run phasegate archive add-oauth"), error
    assert not (repo / "specs").exists()
    assert (repo / "changes/add-oauth/STATE.yaml").is_file()
    assert not (repo / "changes/archive").exists()
    # Nothing runs after the refusal: status names the archive again, nothing in progress,
    # and says what blocks it.
    status = run_cli(repo, "status", "add-oauth").stdout
    assert "in progress" not in status, status
    assert "Next: fix the block, then: phasegate archive add-oauth" in status, status
    assert "Blocked: cannot archive add-oauth: the spec file" in status, status

    spec.write_text(text)
    done = run_cli(repo, "archive", "add-oauth")
    assert done.returncode == 0, done.stderr
    assert (repo / "specs/session.md").read_text() == text
    assert (repo / "specs/oauth-login.md").is_file()


def test_a_spec_dropped_from_the_proposal_is_not_asked_for(repo: Path) -> None:
    _completed(repo)
    proposal = repo / "changes/add-oauth/proposal.md"
    text = proposal.read_text()
    dropped = text.replace("  - name: session\n    depends_on: []\n", "")
    dropped = dropped.replace("depends_on: [session]", "depends_on: []")
    assert dropped != text
    proposal.write_text(dropped)

    done = run_cli(repo, "archive", "add-oauth")
    assert done.returncode == 0, done.stderr
    assert (repo / "specs/oauth-login.md").is_file()
    assert not (repo / "specs/session.md").exists()


LIVING = """\
# auth

## Requirements

### Requirement: Login
The system SHALL let users log in with a password.

### Requirement: Expiry
Sessions expire after one hour.
"""


def test_a_deleted_merge_base_is_named_with_how_to_restore_it(repo: Path) -> None:
    living = repo / "specs" / "auth.md"
    living.parent.mkdir()
    living.write_text(LIVING)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "living specs")
    complete(
        repo,
        "add-oauth",
        specs=["auth"],
        spec_writer=lambda name, text: (text or "").replace("a password", "a passkey"),
    )
    base = repo / "changes/add-oauth/.base/specs/auth.md"
    assert base.read_text() == LIVING
    base.unlink()
    living.write_text(LIVING + "\n### Requirement: Lockout\nLock after five failures.\n")
    after = living.read_bytes()

    refused = run_cli(repo, "archive", "add-oauth")
    assert refused.returncode == ExitCode.BLOCKED, refused.stdout + refused.stderr
    error = refused.stderr.strip().splitlines()[-1]
    assert "conflict" not in error and "changed specs/auth.md" not in error, error
    assert "the merge base changes/add-oauth/.base/specs/auth.md" in error, error
    assert living.read_bytes() == after

    restore = error.split("as committed when the change began: ", 1)[1].split("), then", 1)[0]
    subprocess.run(restore, shell=True, cwd=repo, check=True)
    assert base.read_text() == LIVING
    done = run_cli(repo, "archive", "add-oauth")
    assert done.returncode == 0, done.stderr
    merged = living.read_text()
    assert "a passkey" in merged and "Requirement: Lockout" in merged, merged
