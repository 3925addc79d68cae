"""Known rows for the Milvus 2.3.5 binlog fixtures.

Row i (0 <= i < N) of collection "allt" has the values below; the Go test
internal/storage/milvus_fixture_test.go recomputes them with the same rules,
so keep the two in step.
"""

N = 300
PK_BASE = 1000


def deleted(i):
    """Row i is deleted by primary key before the second flush."""
    return i < 10 or i % 50 == 25


def row(i):
    r = {
        "pk": PK_BASE + i,
        "b": i % 3 == 0,
        "i8": (i % 256) - 128,
        "i16": i * 100 - 15000,
        "i32": i * i - 7,
        "f": i * 0.5,
        "d": i / 7.0,
        "s": ("é" if i % 10 == 0 else "") + "s%04d" % i,
        "j": {"i": i, "tag": "t%d" % (i % 5), "even": i % 2 == 0},
        "ai": [i + k for k in range(i % 4 + 1)],
        "as": ["a%d" % i, "b"][: i % 3],
        "fv": [i + k * 0.25 for k in range(8)],
    }
    if i % 2 == 0:
        r["dyn"] = i * 3
    return r


def vrow(i):
    """Row i of collection "vpk" (VarChar primary key, binary vector)."""
    return {"k": "k%03d" % i, "bv": bytes([i % 256, (i * 7) % 256])}


def vdeleted(i):
    return i % 4 == 1
