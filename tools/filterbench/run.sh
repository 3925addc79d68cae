#!/usr/bin/env bash
# Filtered HNSW search through the server, Strata vs Milvus 2.3.5 standalone,
# same data, alternating (docs/bench/filtered-search.md).
#
#   tools/filterbench/run.sh [BEFORE_REV] > results.jsonl
#
# Builds Strata from the work tree (and, with BEFORE_REV, from that revision
# too, so both builds are measured in the same run), makes the Python venv if
# it is missing, and runs filterbench.py: 200,000 × 128 rows, 300 queries per
# case, 3 rounds. Override with ROWS, QUERIES, ROUNDS, WORK, VENV.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=${VENV:-/tmp/fbvenv}
work=${WORK:-/tmp/filterbench}
mkdir -p "$work"
if [ ! -x "$venv/bin/python" ]; then
	python3 -m venv "$venv"
	"$venv/bin/pip" install -q milvus==2.3.5 pymilvus==2.3.7 "setuptools<70" "numpy<2" \
		"pandas<2.2" "marshmallow<4" "pyarrow<17"
fi
(cd "$root" && go build -o "$work/strata-after" ./cmd/strata)
args=(--strata "after=$work/strata-after")
if [ $# -ge 1 ]; then
	src="$work/src-before"
	rm -rf "$src"
	git -C "$root" worktree add --detach "$src" "$1" >&2
	(cd "$src" && go build -o "$work/strata-before" ./cmd/strata)
	git -C "$root" worktree remove --force "$src" >&2
	args=(--strata "before=$work/strata-before" "${args[@]}")
fi
exec "$venv/bin/python" "$root/tools/filterbench/filterbench.py" "${args[@]}" --milvus \
	--work "$work" --rows "${ROWS:-200000}" --queries "${QUERIES:-300}" --rounds "${ROUNDS:-3}"
