#!/usr/bin/env bash
# Client suites: builds strata, starts two servers on free ports over
# temporary data directories, one as shipped (STRATA_URI) and one with
# authorization on (STRATA_AUTHORIZATION_ENABLED=true, root:Milvus;
# STRATA_AUTH_URI), and runs against them, with pinned client versions:
#   python  clients/python with pytest (pymilvus MilvusClient, the seed's code,
#           REST v2 over plain HTTP)
#   node    clients/node with `node --test` (@zilliz/milvus2-sdk-node)
#   cli     clients/cli with pytest: milvus_cli driven through a pipe against
#           the auth server (connect, users, roles, grants, a denial), in a
#           virtual environment of its own (clients/cli/requirements.txt)
#   frameworks  clients/frameworks with pytest: LangChain (langchain-milvus)
#           and LlamaIndex (llama-index-vector-stores-milvus) hybrid dense +
#           BM25 stores, in a virtual environment of their own
#           (clients/frameworks/requirements.txt: they pin another pymilvus)
#   lite    optional, never by default: clients/python/compare_lite.py, the same
#           pymilvus flows against Strata and against milvus-lite, writing a
#           comparison report (STRATA_LITE_REPORT, default $TMPDIR/compare_lite.md);
#           with STRATA_COMPARE_URI set, against that Milvus server instead
# STRATA_CLIENT_SUITES picks them (default "python node frameworks cli").
#
# The Python virtual environment and node_modules are cached under
# $STRATA_CLIENTS_CACHE (default ~/.cache/strata-clients), keyed by
# clients/python/requirements.txt, clients/frameworks/requirements.txt,
# clients/cli/requirements.txt and clients/node/package-lock.json. If pip or
# npm cannot install the pinned packages the script fails: it never skips.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

fail() { echo "clients.sh: FAILED: $*" >&2; exit 1; }

suites=${STRATA_CLIENT_SUITES:-python node frameworks cli}
want() { case " $suites " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
for s in $suites; do
	case $s in python | node | frameworks | cli | lite) ;; *) fail "unknown suite '$s' in STRATA_CLIENT_SUITES (python, node, frameworks, cli, lite)" ;; esac
done

python=${PYTHON:-python3}
command -v "$python" >/dev/null || fail "$python not found (the client suites need Python >= 3.11)"

# filekey FILE: a short hash of FILE's bytes (the cache key of what it pins).
filekey() { "$python" -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest()[:16])' "$1"; }

req=clients/python/requirements.txt
cache=${STRATA_CLIENTS_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/strata-clients}
key=$(filekey "$req")
venv=$cache/venv-$key
if want python && [ ! -x "$venv/bin/pytest" ]; then
	echo "clients.sh: creating $venv"
	rm -rf "$venv"
	mkdir -p "$cache"
	"$python" -m venv "$venv" || fail "python -m venv failed"
	"$venv/bin/pip" install --disable-pip-version-check -q -r "$req" ||
		{ rm -rf "$venv"; fail "pip could not install $req (is PyPI reachable?)"; }
fi

# venv_for REQ NAME: prints the cached virtual environment
# $cache/venv-NAME-<hash of REQ> with REQ installed, made when missing or
# left unfinished (no .complete marker).
venv_for() {
	local k dir
	k=$(filekey "$1")
	dir=$cache/venv-$2-$k
	if [ ! -x "$dir/bin/python" ] || [ ! -f "$dir/.complete" ]; then
		echo "clients.sh: creating $dir" >&2
		rm -rf "$dir"
		mkdir -p "$cache"
		"$python" -m venv "$dir" >&2 || fail "python -m venv failed"
		"$dir/bin/pip" install --disable-pip-version-check -q -r "$1" >&2 ||
			{ rm -rf "$dir"; fail "pip could not install $1 (is PyPI reachable?)"; }
		touch "$dir/.complete"
	fi
	echo "$dir"
}

if want frameworks; then
	fvenv=$(venv_for clients/frameworks/requirements.txt frameworks)
fi

if want cli; then
	cvenv=$(venv_for clients/cli/requirements.txt cli)
fi

if want node; then
	command -v node >/dev/null || fail "node not found (the Node suite needs Node.js >= 18; STRATA_CLIENT_SUITES=python runs without it)"
	command -v npm >/dev/null || fail "npm not found"
	node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)' ||
		fail "Node.js $(node --version) is too old (the Node suite needs >= 18 for node:test)"
	lock=clients/node/package-lock.json
	nkey=$(filekey "$lock")
	nmods=$cache/node-$nkey
	if [ ! -f "$nmods/node_modules/@zilliz/milvus2-sdk-node/package.json" ]; then
		echo "clients.sh: installing the Node SDK into $nmods"
		rm -rf "$nmods" "$nmods.tmp"
		mkdir -p "$nmods.tmp"
		cp clients/node/package.json "$lock" "$nmods.tmp/"
		# npm ci installs exactly the lock file; no install scripts are needed.
		(cd "$nmods.tmp" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error \
			--cache "$cache/npm") ||
			{ rm -rf "$nmods.tmp"; fail "npm ci could not install $lock (is the npm registry reachable?)"; }
		mv "$nmods.tmp" "$nmods"
	fi
fi

if want lite; then
	lvenv=$(venv_for clients/python/requirements-lite.txt lite)
fi

work=$(mktemp -d)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do
		if kill -0 "$p" 2>/dev/null; then
			kill -TERM "$p" 2>/dev/null || true
			wait "$p" 2>/dev/null || true
		fi
	done
	rm -rf "$work"
}
trap cleanup EXIT

GOFLAGS="${GOFLAGS:-} -buildvcs=false" go build -o "$work/strata" ./cmd/strata || fail "go build"

# start_server NAME [VAR=VALUE...]: starts strata, with those additions to
# its environment, over $work/NAME on two free ports, logging to
# $work/NAME.log; waits for its /healthz and sets server_uri.
start_server() {
	local name=$1 port mport up=
	shift
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
	env "$@" "$work/strata" standalone --data-dir "$work/$name" --addr "127.0.0.1:$port" \
		--metrics-addr "127.0.0.1:$mport" --log-level warn >"$work/$name.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 1 100); do
		if "$python" -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$mport/healthz', timeout=1)" 2>/dev/null; then
			up=1
			break
		fi
		kill -0 "${pids[-1]}" 2>/dev/null || { cat "$work/$name.log" >&2; fail "server $name exited"; }
		sleep 0.1
	done
	[ -n "$up" ] || { cat "$work/$name.log" >&2; fail "server $name did not answer /healthz within 10 s"; }
	server_uri="http://127.0.0.1:$port"
}

start_server data
export STRATA_URI=$server_uri
start_server auth STRATA_AUTHORIZATION_ENABLED=true
export STRATA_AUTH_URI=$server_uri
server_log() {
	local name
	for name in data auth; do
		echo "--- $name server log ---" >&2
		tail -n 50 "$work/$name.log" >&2
	done
}
status=0
if want python; then
	(cd clients/python && "$venv/bin/python" -m pytest -q -p no:cacheprovider "$@") || status=$?
	[ "$status" -eq 0 ] || { server_log; fail "Python suite (pytest exit $status)"; }
fi
if want frameworks; then
	(cd clients/frameworks && "$fvenv/bin/python" -m pytest -q -p no:cacheprovider) || status=$?
	[ "$status" -eq 0 ] || { server_log; fail "framework suite (pytest exit $status)"; }
fi
if want cli; then
	(cd clients/cli && "$cvenv/bin/python" -m pytest -q -p no:cacheprovider) || status=$?
	[ "$status" -eq 0 ] || { server_log; fail "milvus_cli suite (pytest exit $status)"; }
fi
if want node; then
	# NODE_PATH: the pinned node_modules from the cache (a local clients/node/node_modules wins).
	(cd clients/node && NODE_PATH="$nmods/node_modules" node --test --test-concurrency=1 test/*.test.js) || status=$?
	[ "$status" -eq 0 ] || { server_log; fail "Node suite (node --test exit $status)"; }
fi
if want lite; then
	report=${STRATA_LITE_REPORT:-${TMPDIR:-/tmp}/compare_lite.md}
	# STRATA_COMPARE_URI: compare with a running Milvus server instead of milvus-lite.
	if [ -n "${STRATA_COMPARE_URI:-}" ]; then other=(--other "$STRATA_COMPARE_URI"); else other=(--lite-db "$work/lite.db"); fi
	(cd clients/python && "$lvenv/bin/python" compare_lite.py --strata "$STRATA_URI" "${other[@]}" \
		--report "$report") || status=$?
	[ "$status" -eq 0 ] || { server_log; fail "milvus-lite comparison (exit $status)"; }
	echo "clients.sh: comparison report: $report"
fi
echo "clients.sh: client suites passed ($suites)"
