"""A step commit (a rename without fsync) reaches the disk whole after a power cut only
where the file system writes the renamed file's data first (ext4): everywhere else, and
for a file that replaces no old one, the file is fsync'd before the rename."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from phasegate.state.atomic import atomic_write_bytes
from phasegate.state.fs_order import orders_data

EXT4 = (
    "24 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw,discard,errors=remount-ro\n"
    "30 24 0:27 / /dev/shm rw,nosuid,nodev shared:4 - tmpfs tmpfs rw\n"
)


@pytest.mark.parametrize(
    ("table", "device", "expected"),
    [
        (EXT4, os.makedev(254, 1), True),
        (EXT4, os.makedev(0, 27), False),  # tmpfs
        (EXT4, os.makedev(8, 3), False),  # not mounted: nothing is known
        ("25 1 8:3 / /srv rw - ext4 /dev/sda3 rw,data=ordered\n", os.makedev(8, 3), True),
        ("25 1 8:3 / /srv rw - ext4 /dev/sda3 rw,data=writeback\n", os.makedev(8, 3), False),
        ("25 1 8:3 / /srv rw - ext4 /dev/sda3 rw,noauto_da_alloc\n", os.makedev(8, 3), False),
        ("25 1 8:3 / /srv rw,noauto_da_alloc - ext4 /dev/sda3 rw\n", os.makedev(8, 3), False),
        ("25 1 8:3 / /srv rw - xfs /dev/sda3 rw,attr2,inode64\n", os.makedev(8, 3), False),
        ("25 1 0:51 / /var/lib/x rw - overlay overlay rw,lowerdir=/a\n", os.makedev(0, 51), False),
        ("25 1 0:40 / /home rw - btrfs /dev/sdb rw,subvol=/home\n", os.makedev(0, 40), False),
        ("", os.makedev(254, 1), False),  # no mount table (not Linux)
        ("garbage\n25 1 8:3\n", os.makedev(8, 3), False),
    ],
)
def test_only_an_ext4_that_orders_data_is_trusted(table: str, device: int, expected: bool) -> None:
    assert orders_data(table, device) is expected


def _file_system(path: Path) -> str | None:
    findmnt = shutil.which("findmnt")
    if findmnt is None:
        return None
    done = subprocess.run(
        [findmnt, "-n", "-o", "FSTYPE", "-T", str(path)], capture_output=True, text=True
    )
    lines = done.stdout.split()
    return lines[-1] if lines else None  # the mount on top


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The file descriptors os.fsync is called with, as they are called."""
    called: list[int] = []
    real = os.fsync

    def counting(fd: int) -> None:
        called.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    yield called


def test_a_step_commit_on_ext4_replacing_a_file_is_not_fsynced(
    tmp_path: Path, fsyncs: list[int]
) -> None:
    if _file_system(tmp_path) != "ext4":
        pytest.skip("the temporary folder is not on ext4")
    target = tmp_path / "state.json"
    atomic_write_bytes(target, b"first", durable=False)
    assert len(fsyncs) == 1  # a new file replaces no old one: fsync'd
    atomic_write_bytes(target, b"second", durable=False)
    assert len(fsyncs) == 1
    assert target.read_bytes() == b"second"
    atomic_write_bytes(target, b"third")  # durable: the file and its folder
    assert len(fsyncs) == 3


def test_a_step_commit_elsewhere_is_fsynced_before_its_rename(fsyncs: list[int]) -> None:
    shm = Path("/dev/shm")
    if not shm.is_dir() or _file_system(shm) != "tmpfs" or not os.access(shm, os.W_OK):
        pytest.skip("no writable tmpfs at /dev/shm")
    folder = shm / f"phasegate-test-{os.getpid()}"
    folder.mkdir()
    try:
        target = folder / "state.json"
        atomic_write_bytes(target, b"first", durable=False)
        atomic_write_bytes(target, b"second", durable=False)
        assert len(fsyncs) == 2  # each write, the replacing one too; never the folder
        assert target.read_bytes() == b"second"
        assert sorted(p.name for p in folder.iterdir()) == ["state.json"]
    finally:
        shutil.rmtree(folder)
