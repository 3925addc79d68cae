package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "strata.json")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

func TestLoadConfigFile(t *testing.T) {
	cfg := app.Defaults()
	def := app.Defaults()
	p := writeConfig(t, `{
		"dataCoord": {"segmentMaxSize": 1048576, "checkInterval": "100ms", "gcInterval": "1s",
			"droppedRetention": "2s", "orphanRetention": "3s",
			"compaction": {"l0Count": 2, "l0MaxAge": "5s", "l0Size": 1000, "minSmallSegments": 3, "deletedRatio": 0.1}},
		"dataNode": {"syncPeriod": "4s"},
		"wal": {"segmentSize": 4194304}
	}`)
	require.NoError(t, loadConfigFile(p, &cfg, nil))
	require.EqualValues(t, 1<<20, cfg.DataCoord.SegmentMaxSize)
	require.Equal(t, 100*time.Millisecond, cfg.DataCoord.CheckInterval)
	require.Equal(t, time.Second, cfg.DataCoord.GCInterval)
	require.Equal(t, 2*time.Second, cfg.DataCoord.DroppedRetention)
	require.Equal(t, 3*time.Second, cfg.DataCoord.OrphanRetention)
	require.Equal(t, 2, cfg.DataCoord.Compaction.L0Count)
	require.Equal(t, 5*time.Second, cfg.DataCoord.Compaction.L0MaxAge)
	require.EqualValues(t, 1000, cfg.DataCoord.Compaction.L0Size)
	require.Equal(t, 3, cfg.DataCoord.Compaction.MinSmallSegments)
	require.InDelta(t, 0.1, cfg.DataCoord.Compaction.DeletedRatio, 1e-9)
	require.Equal(t, 4*time.Second, cfg.DataNode.SyncPeriod)
	require.EqualValues(t, 4<<20, cfg.WAL.SegmentSize)
	// Absent fields keep their defaults.
	require.Equal(t, def.DataCoord.SealProportion, cfg.DataCoord.SealProportion)
	require.Equal(t, def.DataCoord.Compaction.SmallProportion, cfg.DataCoord.Compaction.SmallProportion)
	require.Equal(t, def.DataNode.SegmentBufferSize, cfg.DataNode.SegmentBufferSize)
}

func TestLoadConfigFileErrors(t *testing.T) {
	for name, body := range map[string]string{
		"unknown field":  `{"dataCoord": {"segmentMaxSise": 1}}`,
		"bad duration":   `{"dataCoord": {"gcInterval": "soon"}}`,
		"number as dur":  `{"dataCoord": {"gcInterval": 5}}`,
		"not json":       `dataCoord: {}`,
		"trailing comma": `{"wal": {"segmentSize": 1,}}`,
	} {
		t.Run(name, func(t *testing.T) {
			cfg := app.Defaults()
			require.Error(t, loadConfigFile(writeConfig(t, body), &cfg, nil))
		})
	}
	cfg := app.Defaults()
	require.Error(t, loadConfigFile(filepath.Join(t.TempDir(), "missing.json"), &cfg, nil))
}

func TestStandaloneRejectsInvalidConfig(t *testing.T) {
	for body, msg := range map[string]string{
		`{"dataCoord": {"segmentMaxSize": -1}}`:                       "segment max size",
		`{"dataCoord": {"compaction": {"minSmallSegments": 1}}}`:      "minSmallSegments",
		`{"dataCoord": {"compaction": {"l0Count": 0}}}`:               "l0Count",
		`{"dataCoord": {"compaction": {"deletedRatio": 0}}}`:          "deletedRatio",
		`{"dataCoord": {"compaction": {"l0Size": -5, "l0Count": 3}}}`: "l0Size",
		`{"dataCoord": {"compaction": {"l0MaxAge": "-1s"}}}`:          "l0MaxAge",
		`{"dataCoord": {"compaction": {"smallProportion": -0.5}}}`:    "smallProportion",
	} {
		p := writeConfig(t, body)
		err := run([]string{"standalone", "--config", p, "--data-dir", t.TempDir(), "--addr", "127.0.0.1:0", "--metrics-addr", ""}, os.Stdout, os.Stderr)
		require.ErrorContains(t, err, msg, body)
	}
}

func TestLoadConfigFileEngines(t *testing.T) {
	cfg := app.Defaults()
	p := writeConfig(t, `{"engines": {
		"meta": {"type": "etcd", "etcd": {"endpoints": ["http://e1:2379", "http://e2:2379"], "root": "strata/", "dialTimeout": "3s"}},
		"objects": {"type": "s3", "s3": {"endpoint": "s3:9000", "bucket": "b", "accessKey": "a", "secretKey": "s",
			"useSSL": true, "root": "r", "createBucket": true}},
		"wal": {"type": "kafka", "kafka": {"brokers": ["k1:9092"], "topicPrefix": "strata.", "replicationFactor": 3,
			"maxRecordBytes": 8388608, "linger": "2ms", "deliveryTimeout": "1m"}}
	}}`)
	require.NoError(t, loadConfigFile(p, &cfg, nil))
	e := cfg.Engines
	require.Equal(t, app.EngineEtcd, e.MetaEngine)
	require.Equal(t, []string{"http://e1:2379", "http://e2:2379"}, e.Etcd.Endpoints)
	require.Equal(t, "strata/", e.Etcd.Root)
	require.Equal(t, 3*time.Second, e.Etcd.DialTimeout)
	require.Equal(t, app.EngineS3, e.ObjectEngine)
	require.Equal(t, "s3:9000", e.S3.Endpoint)
	require.True(t, e.S3.UseSSL)
	require.True(t, e.S3.CreateBucket)
	require.Equal(t, app.EngineKafka, e.WALEngine)
	require.Equal(t, []string{"k1:9092"}, e.Kafka.Brokers)
	require.Equal(t, "strata.", e.Kafka.TopicPrefix)
	require.EqualValues(t, 3, e.Kafka.ReplicationFactor)
	require.EqualValues(t, 8<<20, e.Kafka.MaxRecordBytes)
	require.Equal(t, 2*time.Millisecond, e.Kafka.Linger)
	require.Equal(t, time.Minute, e.Kafka.DeliveryTimeout)
	require.Equal(t, app.Defaults().Engines.Kafka.CloseTimeout, e.Kafka.CloseTimeout, "absent fields keep their defaults")
	require.NoError(t, cfg.Validate())
}

func TestStandaloneRejectsBadEngines(t *testing.T) {
	for body, want := range map[string]string{
		`{"engines": {"wal": {"type": "pulsar"}}}`:                                                    `engines.wal.type "pulsar"`,
		`{"engines": {"wal": {"type": "kafka"}}}`:                                                     "engines.wal.kafka: wal/kafka: invalid config: brokers is empty",
		`{"engines": {"wal": {"type": "kafka", "kafka": {"brokers": ["k:1"], "topicPrefix": "a/"}}}}`: "topicPrefix",
		`{"engines": {"meta": {"type": "etcd"}}}`:                                                     "engines.meta.etcd: metastore/etcd: config: no endpoints",
		`{"engines": {"objects": {"type": "s3", "s3": {"endpoint": "h:1"}}}}`:                         "engines.objects.s3: objstore/s3: config: Bucket is required",
	} {
		p := writeConfig(t, body)
		err := run([]string{"standalone", "--config", p, "--data-dir", t.TempDir(), "--addr", "127.0.0.1:0", "--metrics-addr", ""}, os.Stdout, os.Stderr)
		require.ErrorContains(t, err, want, body)
	}
}
