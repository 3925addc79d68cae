#!/usr/bin/env bash
# Client suites: builds strata, starts it on free ports over a temporary data
# directory, and runs clients/python (pymilvus MilvusClient, the seed's code,
# REST v2 over plain HTTP) against it with pinned client versions.
#
# The virtual environment is cached under $STRATA_CLIENTS_CACHE (default
# ~/.cache/strata-clients), keyed by clients/python/requirements.txt. If pip
# cannot install the pinned packages the script fails: it never skips.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

fail() { echo "clients.sh: FAILED: $*" >&2; exit 1; }

python=${PYTHON:-python3}
command -v "$python" >/dev/null || fail "$python not found (the client suites need Python >= 3.9)"

req=clients/python/requirements.txt
cache=${STRATA_CLIENTS_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/strata-clients}
key=$("$python" -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest()[:16])' "$req")
venv=$cache/venv-$key
if [ ! -x "$venv/bin/pytest" ]; then
	echo "clients.sh: creating $venv"
	rm -rf "$venv"
	mkdir -p "$cache"
	"$python" -m venv "$venv" || fail "python -m venv failed"
	"$venv/bin/pip" install --disable-pip-version-check -q -r "$req" ||
		{ rm -rf "$venv"; fail "pip could not install $req (is PyPI reachable?)"; }
fi

work=$(mktemp -d)
pid=
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

GOFLAGS="${GOFLAGS:-} -buildvcs=false" go build -o "$work/strata" ./cmd/strata || fail "go build"

read -r port mport < <("$python" - <<'EOF'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])
for s in socks:
    s.close()
EOF
)
"$work/strata" standalone --data-dir "$work/data" --addr "127.0.0.1:$port" \
	--metrics-addr "127.0.0.1:$mport" --log-level warn >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
	if "$python" -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$mport/healthz', timeout=1)" 2>/dev/null; then
		break
	fi
	kill -0 "$pid" 2>/dev/null || { cat "$work/server.log" >&2; fail "server exited"; }
	sleep 0.1
done

export STRATA_URI="http://127.0.0.1:$port"
status=0
(cd clients/python && "$venv/bin/python" -m pytest -q -p no:cacheprovider "$@") || status=$?
if [ "$status" -ne 0 ]; then
	echo "--- server log ---" >&2
	tail -n 50 "$work/server.log" >&2
	fail "client suites (pytest exit $status)"
fi
echo "clients.sh: client suites passed"
