"""Summarises filterbench.py's JSON lines as a Markdown table.

    python table.py results.jsonl

Per selectivity and server: the QPS and server CPU per query of every
round, their means, the recall (the same in every round for a fixed
index), and each Strata build's ratio to Milvus: mean QPS over Milvus's
mean QPS, and Milvus's mean CPU per query over the build's.
"""
import json
import sys
from collections import defaultdict


def main():
    rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    cases = defaultdict(list)
    order = []
    for r in rows:
        if "selectivity" not in r:
            continue
        key = (r["selectivity"], r["server"])
        if key not in cases:
            order.append(key)
        cases[key].append(r)
    mean = lambda xs: sum(xs) / len(xs)
    print("| selectivity | server | QPS per round | mean QPS | server CPU ms/query per round | mean CPU ms/query | recall@10 | QPS vs Milvus | CPU/query Milvus ÷ this |")
    print("|---|---|---|---:|---|---:|---:|---:|---:|")
    for sel, server in order:
        rs = cases[(sel, server)]
        q = mean([r["qps"] for r in rs])
        c = mean([r["server_cpu_ms_per_query"] for r in rs])
        rec = mean([r["recall"] for r in rs])
        mv = cases.get((sel, "milvus-2.3.5"))
        ratio_q = ratio_c = ""
        if mv and server != "milvus-2.3.5":
            ratio_q = "%.2f×" % (q / mean([r["qps"] for r in mv]))
            ratio_c = "%.2f×" % (mean([r["server_cpu_ms_per_query"] for r in mv]) / c)
        print("| %s | %s | %s | %.0f | %s | %.2f | %.4f | %s | %s |" % (
            sel, server, ", ".join("%.0f" % r["qps"] for r in rs), q,
            ", ".join("%.2f" % r["server_cpu_ms_per_query"] for r in rs), c, rec, ratio_q, ratio_c))


if __name__ == "__main__":
    main()
