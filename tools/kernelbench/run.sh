#!/usr/bin/env bash
# Kernel benchmark against faiss-cpu (and hnswlib for HNSW), one run per
# index type, on the same synthetic clustered data (see internal/bench:
# Synthetic): FLAT and IVF_FLAT (nlist 1024, nprobe 8/16/32) single-threaded
# (GOMAXPROCS=1, one OpenMP thread), HNSW build on every core. Results and
# their reading are in docs/bench/kernels.md.
#
# Usage: tools/kernelbench/run.sh [OUTDIR]   (default /tmp/kernelbench)
# Env:   N (rows, default 100000), DIM (128), PY (python with faiss-cpu,
#        numpy, hnswlib; created as a venv under OUTDIR when unset),
#        HNSW_N (rows of the HNSW build, default 200000).
set -euo pipefail
out=${1:-/tmp/kernelbench}
n=${N:-100000}
dim=${DIM:-128}
hn=${HNSW_N:-200000}
mkdir -p "$out"
cd "$(dirname "$0")/../.."
if [ -z "${PY:-}" ]; then
	python3 -m venv "$out/venv"
	"$out/venv/bin/pip" install -q 'faiss-cpu==1.15.*' numpy hnswlib
	PY=$out/venv/bin/python
fi
go build -o "$out/strata" ./cmd/strata
common=(--synthetic "$n,$dim" --rounds 3 --python "$PY")
GOMAXPROCS=1 OMP_NUM_THREADS=1 "$out/strata" bench --index FLAT --threads 1 "${common[@]}" | tee "$out/flat.txt"
GOMAXPROCS=1 OMP_NUM_THREADS=1 "$out/strata" bench --index IVF_FLAT --nlist 1024 --sweep 8,16,32 --threads 1 \
	"${common[@]}" | tee "$out/ivf_flat.txt"
# The HNSW build on every core: compare its wall time with its CPU time.
"$out/strata" bench --index HNSW --synthetic "$hn,$dim" --sweep 64 --rounds 1 --python "$PY" | tee "$out/hnsw.txt"
