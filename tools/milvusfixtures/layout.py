"""Print the layout of Milvus storage-v1 files, for side-by-side comparison.

    python layout.py FILE...          one JSON object per file
    python layout.py --diff A B       only the properties where A and B differ

For binlogs (insert and delta logs): magic, descriptor header and fixed part,
post-header lengths, extras, and per data event its header and the Parquet
payload's schema (column name, repetition, physical and logical type),
codec, encodings, dictionary page, statistics, row groups, created_by and
key-value metadata. For stats logs (JSON): the key order and the filter's
JSON keys. --diff drops the properties that differ between any two writes
(IDs, timestamps: VOLATILE) and prints every other one that differs; sizes
and offsets are compared too, so compare files holding the same rows.
"""

import io
import json
import struct
import sys

import pyarrow.parquet as pq

VOLATILE = {"descriptor.timestamp", "descriptor.collection", "descriptor.partition",
            "descriptor.segment", "descriptor.start_ts", "descriptor.end_ts",
            "event.timestamp", "event.start_ts", "event.end_ts"}


def header(b, off):
    ts, code, length, nxt = struct.unpack_from("<Qbii", b, off)
    return {"timestamp": ts, "type": code, "event_length": length, "next_position": nxt}


def parquet_props(payload):
    f = pq.ParquetFile(io.BytesIO(payload))
    md = f.metadata
    col = f.schema.column(0)
    rg = md.row_group(0).column(0)
    st = rg.statistics
    return {
        "column": col.name, "repetition": "OPTIONAL" if col.max_definition_level > 0 else "REQUIRED",
        "max_definition_level": col.max_definition_level,
        "physical": col.physical_type, "logical": str(col.logical_type),
        "length": col.length, "codec": rg.compression, "encodings": list(rg.encodings),
        "dictionary_page": rg.has_dictionary_page, "statistics": rg.is_stats_set,
        "stats_min": st.min if st is not None and st.has_min_max else None,
        "stats_max": st.max if st is not None and st.has_min_max else None,
        "row_groups": md.num_row_groups, "rows": md.num_rows, "created_by": md.created_by,
        "format_version": md.format_version, "kv_metadata": sorted((md.metadata or {}).keys()),
        "total_compressed_size": rg.total_compressed_size,
        "total_uncompressed_size": rg.total_uncompressed_size,
        "payload_bytes": len(payload),
    }


def binlog(b):
    out = {"magic": b[:4].hex()}
    d = header(b, 4)
    coll, part, seg, field, sts, ets, pt = struct.unpack_from("<qqqqQQi", b, 21)
    d.update({"collection": coll, "partition": part, "segment": seg, "field": field,
              "start_ts": sts, "end_ts": ets, "payload_type": pt})
    out["descriptor"] = d
    out["post_header_lengths"] = list(b[73:81])
    n = struct.unpack_from("<i", b, 81)[0]
    out["extras_raw"] = b[85:85 + n].decode()
    out["extras"] = json.loads(out["extras_raw"])
    off = 4 + d["event_length"]
    events = []
    while off < len(b):
        h = header(b, off)
        sts, ets = struct.unpack_from("<QQ", b, off + 17)
        h.update({"offset": off, "start_ts": sts, "end_ts": ets})
        h["parquet"] = parquet_props(b[off + 33: off + h["event_length"]])
        events.append(h)
        off += h["event_length"]
    out["events"] = events
    return out


def stats(b):
    v = json.loads(b)
    first = v[0] if isinstance(v, list) else v
    return {"json": "array" if isinstance(v, list) else "object",
            "entries": len(v) if isinstance(v, list) else 1,
            "keys": list(first.keys()), "bf_keys": list(first.get("bf", {}).keys()),
            "values": {k: first[k] for k in first if k != "bf"}}


def describe(path):
    b = open(path, "rb").read()
    if b[:1] in (b"{", b"["):
        return stats(b)
    return binlog(b)


def flatten(d, prefix=""):
    out = {}
    for k, v in d.items():
        key = prefix + k
        if k == "events":
            for ev in v:
                out.update(flatten({kk: vv for kk, vv in ev.items() if kk != "parquet"}, "event."))
                out.update(flatten(ev["parquet"], "parquet."))
        elif isinstance(v, dict) and k in ("descriptor", "extras"):
            out.update(flatten(v, k + "."))
        else:
            out[key] = v
    return out


def main():
    args = sys.argv[1:]
    if args and args[0] == "--diff":
        a, b = (flatten(describe(p)) for p in args[1:3])
        for k in sorted(set(a) | set(b)):
            if k in VOLATILE or k == "extras_raw" and "extras.original_size" in a:
                continue
            if a.get(k) != b.get(k):
                print("%-32s %-40s %s" % (k, json.dumps(a.get(k)), json.dumps(b.get(k))))
        return
    for p in args:
        print(json.dumps({"file": p, **describe(p)}, default=str))


if __name__ == "__main__":
    main()
