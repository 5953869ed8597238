"""Whether a folder's file system writes a file's data before a rename over an old file.

A step commit replaces the state files with a rename and no fsync: a killed
process leaves the old file or the new one. After a power cut that holds only
where the file system writes the new file's data to disk before the rename:
ext4 does (``auto_da_alloc``: renaming a file over an existing one makes the
new file's blocks reach the disk first) unless it is mounted
``noauto_da_alloc`` or ``data=writeback``. Elsewhere (XFS, btrfs, overlay,
network file systems, and any system without ``/proc/self/mountinfo``) the
rename may reach the disk before the data, leaving an empty or zeroed state
file: there a step commit fsyncs the file before renaming it.
"""

from __future__ import annotations

import os

MOUNTINFO = "/proc/self/mountinfo"

#: Device -> whether its file system orders a renamed file's data first.
_by_device: dict[int, bool] = {}
#: Folder -> its device (a step commit writes to the same few folders again and again).
_devices: dict[str, int] = {}


def replace_keeps_data(folder: str) -> bool:
    """Whether a file renamed over another in ``folder`` has its data on disk first."""
    device = _devices.get(folder)
    if device is None:
        try:
            device = os.stat(folder or ".").st_dev
        except OSError:
            return False
        if len(_devices) >= 1024:
            _devices.clear()
        _devices[folder] = device
    known = _by_device.get(device)
    if known is None:
        try:
            with open(MOUNTINFO, encoding="utf-8", errors="replace") as handle:
                table = handle.read()
        except OSError:
            table = ""
        known = _by_device[device] = orders_data(table, device)
    return known


def orders_data(mountinfo: str, device: int) -> bool:
    """Whether the mount of ``device`` in ``mountinfo`` (the text of a
    ``/proc/PID/mountinfo``) is an ext4 that writes a renamed file's data first."""
    wanted = f"{os.major(device)}:{os.minor(device)}"
    found: tuple[str, set[str]] | None = None
    for line in mountinfo.splitlines():
        fields = line.split(" ")
        # ID PARENT MAJOR:MINOR ROOT MOUNT-POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER-OPTIONS
        if len(fields) < 10 or fields[2] != wanted or "-" not in fields[6:]:
            continue
        rest = fields[fields.index("-", 6) + 1 :]
        if len(rest) < 3:
            continue
        found = (rest[0], set(fields[5].split(",")) | set(rest[2].split(",")))
    if found is None:
        return False
    kind, options = found
    if kind != "ext4":
        return False
    return "noauto_da_alloc" not in options and "data=writeback" not in options
