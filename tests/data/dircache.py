"""tests/data/dircache.py: the entries of a version-2 git index, as the scripts beside it rewrite
them (lying-ieot.py, forge-stat.py)."""

import struct


def entries(data):
    """The header's entry count and each entry's bytes (padding included) of the index `data`."""
    signature, version, count = struct.unpack(">4sII", data[:12])
    assert signature == b"DIRC" and version == 2, (signature, version)
    found, at = [], 12
    for _ in range(count):
        name_len = struct.unpack(">H", data[at + 60 : at + 62])[0] & 0xFFF
        size = (62 + name_len + 8) & ~7
        found.append(data[at : at + size])
        at += size
    return count, found


def path(entry):
    """The path an entry names."""
    name_len = struct.unpack(">H", entry[60:62])[0] & 0xFFF
    return entry[62 : 62 + name_len]
