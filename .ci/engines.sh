#!/usr/bin/env bash
# Installs the real cluster engines (all of the first two by default, or those named) the real-engine tests start (internal/enginetest
# RealKafka and RealS3; e2e TestRealEngines*, TestCluster*), from the registries only:
#
#   Apache Kafka 4.1.2 (KRaft)  jars of org.apache.kafka:kafka_2.13 from Maven Central
#                               -> $STRATA_ENGINES/kafka/libs      (needs java 17+ and mvn)
#   Versity S3 Gateway v1.8.0   go install github.com/versity/versitygw/cmd/versitygw
#                               -> $STRATA_ENGINES/bin/versitygw   (Apache-2.0)
#
#   etcd 3.6.16 (only when asked: `.ci/engines.sh etcd`, for tools/cluster/up.sh)
#                               built from go.etcd.io/etcd/server/v3 in a scratch module
#                               -> $STRATA_ENGINES/bin/etcd
#
# The tests need no etcd install: they run a real etcd server in-process (go.etcd.io/etcd/server/v3/embed).
# Idempotent: an engine already installed is kept. A machine without java or mvn gets no Kafka, and the
# tests that need it skip, saying so. STRATA_ENGINES defaults to ~/.cache/strata-engines.
set -euo pipefail
STRATA_ENGINES=${STRATA_ENGINES:-$HOME/.cache/strata-engines}
KAFKA_VERSION=4.1.2
VERSITYGW_VERSION=v1.8.0
mkdir -p "$STRATA_ENGINES/bin"

kafka() {
  local d=$STRATA_ENGINES/kafka
  [ -f "$d/libs/kafka_2.13-$KAFKA_VERSION.jar" ] && return
  if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
    echo "engines.sh: java or mvn missing: no Kafka (tests needing it skip)" >&2
    return
  fi
  mkdir -p "$d"
  cat > "$d/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local</groupId><artifactId>kafka-broker</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$KAFKA_VERSION</version></dependency>
    <!-- Kafka logs through slf4j 1.7; this binding reads a log4j 1 properties file. -->
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId><version>1.7.36</version></dependency>
  </dependencies>
</project>
POM
  rm -rf "$d/libs"
  (cd "$d" && mvn -q -B dependency:copy-dependencies -DoutputDirectory=libs)
  echo "engines.sh: Kafka $KAFKA_VERSION, $(ls "$d/libs" | wc -l) jars in $d/libs"
}

versitygw() {
  [ -x "$STRATA_ENGINES/bin/versitygw" ] && return
  GOBIN="$STRATA_ENGINES/bin" GOFLAGS= go install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"
  echo "engines.sh: versitygw $VERSITYGW_VERSION in $STRATA_ENGINES/bin"
}

etcd() {
  [ -x "$STRATA_ENGINES/bin/etcd" ] && return
  # `go install go.etcd.io/etcd/server/v3@...` is refused (replace directives):
  # a main module around etcdmain builds the same server.
  local src; src=$(mktemp -d)
  printf 'package main\n\nimport (\n\t"os"\n\n\t"go.etcd.io/etcd/server/v3/etcdmain"\n)\n\nfunc main() { etcdmain.Main(os.Args) }\n' > "$src/main.go"
  (cd "$src" && GOFLAGS= go mod init local/etcd >/dev/null 2>&1 && GOFLAGS= go get go.etcd.io/etcd/server/v3@v3.6.16 >/dev/null 2>&1 \
    && GOFLAGS= go mod tidy >/dev/null 2>&1 && GOFLAGS= go build -o "$STRATA_ENGINES/bin/etcd" .)
  rm -rf "$src"
  echo "engines.sh: etcd $("$STRATA_ENGINES/bin/etcd" --version | head -1) in $STRATA_ENGINES/bin"
}

if [ $# -eq 0 ]; then set -- kafka versitygw; fi
for e in "$@"; do
  case $e in
    kafka) kafka ;; versitygw) versitygw ;; etcd) etcd ;;
    *) echo "engines.sh: unknown engine $e (kafka, versitygw, etcd)" >&2; exit 2 ;;
  esac
done
