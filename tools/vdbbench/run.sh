#!/usr/bin/env bash
# Runs VectorDBBench 2.0 (unmodified, from PyPI) against a fresh Strata
# standalone: its Milvus HNSW client on the PerformanceCustomDataset case over
# a synthetic clustered dataset (dataset.py), then prints the result's
# load/optimize durations, QPS and recall. See docs/bench/vectordbbench.md.
#
#   ROWS=50000 bash tools/vdbbench/run.sh
#
# ROWS (default 50000), WORK (default $TMPDIR/strata-vdbbench: the venv,
# dataset, data dir and results), PORT (39530), CONC ("1,2"), DURATION (15 s).
set -euo pipefail
cd "$(dirname "$0")/../.."
rows=${ROWS:-50000}
work=${WORK:-${TMPDIR:-/tmp}/strata-vdbbench}
port=${PORT:-39530}
mport=$((port + 61))
mkdir -p "$work"
if [ ! -f "$work/venv/.complete" ]; then
	python3 -m venv "$work/venv"
	"$work/venv/bin/pip" install -q 'vectordb-bench==2.0.0'
	touch "$work/venv/.complete"
fi
go build -o "$work/strata" ./cmd/strata
ds=$work/ds-$rows
[ -f "$ds/neighbors.parquet" ] || "$work/venv/bin/python" tools/vdbbench/dataset.py "$rows" "$ds"
rm -rf "$work/data"
"$work/strata" standalone --data-dir "$work/data" --addr "127.0.0.1:$port" \
	--metrics-addr "127.0.0.1:$mport" >"$work/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
for _ in $(seq 1 100); do curl -sf -o /dev/null "http://127.0.0.1:$mport/healthz" && break; sleep 0.1; done
export RESULTS_LOCAL_DIR=$work/results
rm -rf "$RESULTS_LOCAL_DIR"
"$work/venv/bin/vectordbbench" milvushnsw --uri "http://127.0.0.1:$port" --db-label strata \
	--case-type PerformanceCustomDataset --custom-case-name "strata-$rows" --custom-dataset-name "clustered-$rows" \
	--custom-dataset-dir "$ds" --custom-dataset-size "$rows" --custom-dataset-dim 128 \
	--custom-dataset-metric-type L2 --custom-dataset-file-count 1 \
	--m 16 --ef-construction 64 --ef-search 64 --k 10 \
	--num-concurrency "${CONC:-1,2}" --concurrency-duration "${DURATION:-15}" >"$work/vdbbench.log" 2>&1
"$work/venv/bin/python" - "$RESULTS_LOCAL_DIR" <<'PY'
import glob, json, sys
for f in glob.glob(sys.argv[1] + "/Milvus/*.json"):
    for r in json.load(open(f))["results"]:
        m = r["metrics"]
        print(f'insert {m["insert_duration"]:.1f} s, optimize {m["optimize_duration"]:.1f} s, '
              f'serial p99 {m["serial_latency_p99"]*1000:.1f} ms, recall@10 {m["recall"]:.4f}, '
              f'QPS {m["qps"]:.0f} (per concurrency {dict(zip(m["conc_num_list"], [round(q) for q in m["conc_qps_list"]]))})')
PY
