package e2e

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/enginetest"
)

// clusterSubset are the suite's tests TestSuiteOnCluster runs against a
// cluster in every `go test ./...` where the engines are installed: writes,
// flush and a restart, partitions, deletes and upserts on indexed sealed
// segments, hybrid search, databases and aliases, users and privileges.
// The whole suite runs on a cluster with STRATA_E2E_TARGET=cluster.
var clusterSubset = []struct {
	name string
	test func(*testing.T)
}{
	{"TestWriteReadFlushRestart", TestWriteReadFlushRestart},
	{"TestVarCharPKAndPartitions", TestVarCharPKAndPartitions},
	{"TestDeleteUpsertVisibilityOnIndexedSealedSegment", TestDeleteUpsertVisibilityOnIndexedSealedSegment},
	{"TestHybridSearch", TestHybridSearch},
	{"TestDatabasesAndAliases", TestDatabasesAndAliases},
	{"TestAuthLoginAndPrivileges", TestAuthLoginAndPrivileges},
}

// TestSuiteOnCluster runs clusterSubset against clusters (a coordinator,
// clusterDataNodes data nodes, clusterQueryNodes query nodes, in this
// process) on a real etcd, Kafka broker and S3 server. It skips where Kafka
// or the S3 server is not installed (.ci/engines.sh), and under
// STRATA_E2E_TARGET=cluster, where every test runs on a cluster anyway.
func TestSuiteOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Kafka, an S3 server and a cluster per test")
	}
	if target != nil {
		t.Skip("every test runs on a cluster in this run")
	}
	kafka := enginetest.RealKafka(t)
	s3 := enginetest.RealS3(t)
	e, err := newClusterEngines(enginetest.NewEtcd(t), kafka, s3)
	require.NoError(t, err)
	t.Cleanup(e.close)
	target = e
	defer func() { target = nil }()
	for _, tc := range clusterSubset {
		t.Run(tc.name, tc.test)
	}
}
