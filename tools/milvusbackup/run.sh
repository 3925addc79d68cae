#!/usr/bin/env bash
# Runs zilliztech/milvus-backup against a Strata standalone on an S3 object
# store and checks that a restored collection holds exactly the original rows.
#
#   tools/milvusbackup/run.sh            (from the repository root)
#
# What it does (docs/ops/backup.md, "With milvus-backup"):
#   1. builds, into $MB_CACHE (default ~/.cache/strata-milvusbackup), outside the
#      repository: milvus-backup $MB_VERSION from its source (git clone of
#      $MB_REPO, or $MB_SRC when set; modules from the Go proxy), the Versity S3
#      Gateway (go install, Apache-2.0) and Strata itself (go build ./cmd/strata);
#   2. starts versitygw on 127.0.0.1:$S3_PORT over a directory (posix backend:
#      the file system needs user xattrs), and a Strata
#      standalone (embedded meta and WAL) whose object store is bucket "strata",
#      rootPath "files", on that S3, gRPC on 127.0.0.1:$STRATA_PORT;
#   3. creates collection mb_src with pymilvus (3 flushed batches of 1000 rows,
#      one in partition p1; 300 deletes, 50 upserts (UPSERTS=0: none); dynamic
#      field, JSON, Array, nullable, vector), then runs milvus-backup create,
#      list and restore
#      (suffix _restored) with backup.yaml pointed at Strata and the same bucket;
#   4. compares every row of mb_src and mb_src_restored by primary key, all fields
#      (tools/milvusbackup/data.py), and exits non-zero on any difference.
#
# Env: MB_CACHE, MB_VERSION (tag, default v0.5.16), MB_REPO, MB_SRC (a source tree
# to use instead of cloning), PYTHON (with pymilvus 2.6; default: a venv made in
# $MB_CACHE), S3_PORT (37633), STRATA_PORT (37630), UPSERTS=0 (no upserts
# before the backup), KEEP=1 (leave the servers and the data directory
# running/in place).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tools/milvusbackup
MB_CACHE=${MB_CACHE:-$HOME/.cache/strata-milvusbackup}
MB_VERSION=${MB_VERSION:-v0.5.16}
MB_REPO=${MB_REPO:-https://github.com/zilliztech/milvus-backup.git}
VERSITYGW_VERSION=${VERSITYGW_VERSION:-v1.8.0}
S3_PORT=${S3_PORT:-37633}
STRATA_PORT=${STRATA_PORT:-37630}
METRICS_PORT=${METRICS_PORT:-$((STRATA_PORT + 1))}
S3_ACCESS_KEY=strata
S3_SECRET_KEY=strata-secret
BUCKET=strata
BIN=$MB_CACHE/bin
RUN=$MB_CACHE/run
mkdir -p "$BIN"

log() { echo "run.sh: $*" >&2; }

# 1. builds
if [ ! -x "$BIN/milvus-backup-$MB_VERSION" ]; then
  src=${MB_SRC:-}
  if [ -z "$src" ]; then
    src=$MB_CACHE/src-$MB_VERSION
    [ -d "$src" ] || git clone -q --depth 1 --branch "$MB_VERSION" "$MB_REPO" "$src"
  fi
  log "building milvus-backup $MB_VERSION from $src"
  (cd "$src" && go build -o "$BIN/milvus-backup-$MB_VERSION" .)
fi
if [ ! -x "$BIN/versitygw" ]; then
  log "installing versitygw $VERSITYGW_VERSION"
  GOBIN=$BIN go install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"
fi
log "building strata"
(cd "$ROOT" && go build -o "$BIN/strata" ./cmd/strata)
PY=${PYTHON:-}
if [ -z "$PY" ]; then
  [ -x "$MB_CACHE/venv/bin/python" ] || { python3 -m venv "$MB_CACHE/venv" && "$MB_CACHE/venv/bin/pip" -q install 'pymilvus>=2.6,<2.7'; }
  PY=$MB_CACHE/venv/bin/python
fi

# 2. servers
rm -rf "$RUN" && mkdir -p "$RUN/s3/data" "$RUN/logs"
PIDS=()
cleanup() {
  if [ "${KEEP:-0}" = 1 ]; then log "KEEP=1: servers ${PIDS[*]} left running, data in $RUN"; return; fi
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

ROOT_ACCESS_KEY=$S3_ACCESS_KEY ROOT_SECRET_KEY=$S3_SECRET_KEY \
  "$BIN/versitygw" --port "127.0.0.1:$S3_PORT" posix "$RUN/s3/data" \
  >"$RUN/logs/versitygw.log" 2>&1 &
PIDS+=($!)

cat >"$RUN/strata.json" <<EOF
{"dataDir": "$RUN/strata", "addr": "127.0.0.1:$STRATA_PORT", "metricsAddr": "127.0.0.1:$METRICS_PORT",
 "rootPath": "files",
 "engines": {"objects": {"type": "s3", "s3": {"endpoint": "127.0.0.1:$S3_PORT", "bucket": "$BUCKET",
   "accessKey": "$S3_ACCESS_KEY", "secretKey": "$S3_SECRET_KEY", "createBucket": true}}}}
EOF
sleep 0.5
"$BIN/strata" standalone --config "$RUN/strata.json" >"$RUN/logs/strata.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 120); do
  grep -q "strata standalone ready" "$RUN/logs/strata.log" && break
  kill -0 "${PIDS[1]}" 2>/dev/null || { cat "$RUN/logs/strata.log" >&2; exit 1; }
  sleep 0.5
done
grep -q "strata standalone ready" "$RUN/logs/strata.log" || { log "strata did not start"; exit 1; }

cat >"$RUN/backup.yaml" <<EOF
log:
  level: info
  console: false
  file:
    filename: "$RUN/logs/backup.log"
milvus:
  address: 127.0.0.1
  port: $STRATA_PORT
  user: ""
  password: ""
  tlsMode: 0
minio:
  storageType: "minio"
  address: 127.0.0.1
  port: $S3_PORT
  accessKeyID: $S3_ACCESS_KEY
  secretAccessKey: $S3_SECRET_KEY
  useSSL: false
  useIAM: false
  bucketName: "$BUCKET"
  rootPath: "files"
  backupStorageType: "minio"
  backupAddress: 127.0.0.1
  backupPort: $S3_PORT
  backupAccessKeyID: $S3_ACCESS_KEY
  backupSecretAccessKey: $S3_SECRET_KEY
  backupBucketName: "$BUCKET"
  backupRootPath: "backup"
  backupUseSSL: false
  crossStorage: false
backup:
  parallelism:
    copydata: 16
    backupCollection: 1
    backupSegment: 16
    restoreCollection: 1
    importJob: 16
  keepTempFiles: false
  gcPause:
    enable: false
    address: http://127.0.0.1:$METRICS_PORT
EOF

# 3. data, create, list, restore
MB() { "$BIN/milvus-backup-$MB_VERSION" --config "$RUN/backup.yaml" "$@"; }
URI=http://127.0.0.1:$STRATA_PORT
"$PY" "$HERE/data.py" "$URI" load mb_src "${UPSERTS:-1}"
t0=$(date +%s.%N)
MB create -n b1 --filter default.mb_src
t1=$(date +%s.%N)
MB list
MB restore -n b1 -s _restored
t2=$(date +%s.%N)
log "create $(echo "$t1 - $t0" | bc) s, restore $(echo "$t2 - $t1" | bc) s"

# 4. compare
"$PY" "$HERE/data.py" "$URI" compare mb_src mb_src_restored
log "OK: milvus-backup $MB_VERSION create/list/restore against Strata, every row equal"
