"""tests/data/forge-stat.py INDEX: rewrite the version-2 index INDEX so that each entry records the
stat data its file (relative to the current directory) has now, whatever the file holds: git's
status, trusting stat data, then takes every edit made since the index was written for no change.
The entries' object ids are kept; the extensions are dropped (git reads an index without them).
The index is then dated two seconds ahead, so that no entry is racily clean to a git that compares
whole seconds.
"""

import hashlib
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dircache  # noqa: E402

index = sys.argv[1]
data = open(index, "rb").read()
_, old = dircache.entries(data)
entries = []
for entry in old:
    st = os.lstat(dircache.path(entry))
    u32 = lambda n: n & 0xFFFFFFFF
    forged = struct.pack(
        ">IIIIII",
        u32(int(st.st_ctime)),
        st.st_ctime_ns % 1_000_000_000,
        u32(int(st.st_mtime)),
        st.st_mtime_ns % 1_000_000_000,
        u32(st.st_dev),
        u32(st.st_ino),
    )
    mode = entry[24:28]
    rest = struct.pack(">III", u32(st.st_uid), u32(st.st_gid), u32(st.st_size))
    entries.append(forged + mode + rest + entry[40:])
body = data[:12] + b"".join(entries)
open(index, "wb").write(body + hashlib.sha1(body).digest())
ahead = os.stat(index).st_mtime_ns + 2_000_000_000
os.utime(index, ns=(ahead, ahead))
