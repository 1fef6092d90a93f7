"""tests/data/lying-ieot.py INDEX PATH BLOB: rewrite the version-2 index INDEX so that git and a
reader trusting the index's own entry offset table (IEOT) read different entries.

git reads the entries one after another, the header's count of them: PATH's entry there names BLOB
(staged work). Behind the last entry comes PATH's original entry again, its first four bytes made
to read as an optional extension git skips ("XXXX", then its length). The IEOT table lists the
entries in chunks that take that original instead of the staged one, so a reader that decodes
the chunks it names sees the index as it was: nothing staged.
"""

import hashlib
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dircache  # noqa: E402

index, path, blob = sys.argv[1], sys.argv[2].encode(), bytes.fromhex(sys.argv[3])
data = open(index, "rb").read()
count, entries = dircache.entries(data)
target = next(i for i, e in enumerate(entries) if e[62 : 62 + len(path)] == path and e[62 + len(path)] == 0)
original = entries[target]
entries[target] = original[:40] + blob + original[60:]
# The original once more, its ctime (8 bytes) an extension header git skips: "XXXX" and the
# length of what follows it.
disguised = b"XXXX" + struct.pack(">I", len(original) - 8) + original[8:]

header = struct.pack(">4sII", b"DIRC", 2, count)
offsets, at = [], len(header)
for e in entries:
    offsets.append(at)
    at += len(e)
disguised_at, extensions_at = at, at + len(disguised)
chunks = []
if target > 0:
    chunks.append((offsets[0], target))
chunks.append((disguised_at, 1))
if target + 1 < count:
    chunks.append((offsets[target + 1], count - target - 1))
table = struct.pack(">I", 1) + b"".join(struct.pack(">II", o, n) for o, n in chunks)
ieot = b"IEOT" + struct.pack(">I", len(table)) + table
eoie_hash = hashlib.sha1(b"IEOT" + struct.pack(">I", len(table))).digest()
eoie = b"EOIE" + struct.pack(">I", 24) + struct.pack(">I", extensions_at) + eoie_hash
body = header + b"".join(entries) + disguised + ieot + eoie
open(index, "wb").write(body + hashlib.sha1(body).digest())
