package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
	"github.com/strata-db/strata/internal/config"
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
	require.Equal(t, app.EngineEtcd, e.Meta.Type)
	require.Equal(t, []string{"http://e1:2379", "http://e2:2379"}, e.Meta.Etcd.Endpoints)
	require.Equal(t, "strata/", e.Meta.Etcd.Root)
	require.Equal(t, 3*time.Second, e.Meta.Etcd.DialTimeout)
	require.Equal(t, app.EngineS3, e.Objects.Type)
	require.Equal(t, "s3:9000", e.Objects.S3.Endpoint)
	require.True(t, e.Objects.S3.UseSSL)
	require.True(t, e.Objects.S3.CreateBucket)
	require.Equal(t, app.EngineKafka, e.WAL.Type)
	require.Equal(t, []string{"k1:9092"}, e.WAL.Kafka.Brokers)
	require.Equal(t, "strata.", e.WAL.Kafka.TopicPrefix)
	require.EqualValues(t, 3, e.WAL.Kafka.ReplicationFactor)
	require.EqualValues(t, 8<<20, e.WAL.Kafka.MaxRecordBytes)
	require.Equal(t, 2*time.Millisecond, e.WAL.Kafka.Linger)
	require.Equal(t, time.Minute, e.WAL.Kafka.DeliveryTimeout)
	require.Equal(t, app.Defaults().Engines.WAL.Kafka.CloseTimeout, e.WAL.Kafka.CloseTimeout, "absent fields keep their defaults")
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

// readmeJSON returns the ```json blocks of the README section under heading.
func readmeJSON(t *testing.T, heading string) []string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, sec, ok := strings.Cut(string(data), "\n"+heading+"\n")
	require.True(t, ok, "README has no %q", heading)
	if i := strings.Index(sec, "\n#"); i >= 0 {
		sec = sec[:i]
	}
	var blocks []string
	for {
		_, rest, ok := strings.Cut(sec, "```json\n")
		if !ok {
			return blocks
		}
		block, after, _ := strings.Cut(rest, "```")
		blocks, sec = append(blocks, block), after
	}
}

// keys lists the dotted key paths of the leaves of a JSON document (an
// empty object counts as a leaf).
func keys(t *testing.T, doc []byte) []string {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal(doc, &v))
	var out []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, x := range m {
			if sub, ok := x.(map[string]any); ok && len(sub) > 0 {
				walk(prefix+k+".", sub)
				continue
			}
			out = append(out, prefix+k)
		}
	}
	walk("", v)
	sort.Strings(out)
	return out
}

// TestReadmeDocumentsEveryKey: the README's configuration documents name
// every key of the configuration, are valid documents, and the first one
// shows the defaults.
func TestReadmeDocumentsEveryKey(t *testing.T) {
	defaults, err := config.Encode(fileConfig{Config: app.Defaults()})
	require.NoError(t, err)
	documented := map[string]bool{}
	for _, heading := range []string{"### Configuration file", "### Cluster engines"} {
		blocks := readmeJSON(t, heading)
		require.NotEmpty(t, blocks, heading)
		for _, b := range blocks {
			fc := fileConfig{Config: app.Defaults()}
			require.NoError(t, config.Decode([]byte(b), &fc), "%s:\n%s", heading, b)
			for _, k := range keys(t, []byte(b)) {
				documented[k] = true
			}
		}
	}
	for _, k := range keys(t, defaults) {
		require.True(t, documented[k], "README's configuration sections do not show %q", k)
	}
	fc := fileConfig{Config: app.Defaults()}
	require.NoError(t, config.Decode([]byte(readmeJSON(t, "### Configuration file")[0]), &fc))
	require.Equal(t, fileConfig{Config: app.Defaults()}, fc, "the README's first document shows the defaults")
}

// oldReadmeDocument is the README's configuration document before the keys
// were declared on the components' Config structs.
const oldReadmeDocument = `{
  "dataCoord": {
    "segmentMaxSize": 1073741824,   "sealProportion": 0.12,   "maxIdle": "10m",
    "growingMemoryLimit": 2147483648, "checkInterval": "2s",
    "gcInterval": "1m", "droppedRetention": "1h", "orphanRetention": "1h",
    "compaction": {"l0Count": 8, "l0MaxAge": "10m", "l0Size": 67108864,
                   "smallProportion": 0.5, "minSmallSegments": 4, "deletedRatio": 0.2,
                   "expiryGrace": "1m"}
  },
  "dataNode": {"segmentBufferSize": 16777216, "syncPeriod": "10m"},
  "wal": {"segmentSize": 67108864},
  "memoryLimit": null
}`

// TestOldDocumentsDecodeTheSame: documents the hand-written file mirror
// accepted read to the same values.
func TestOldDocumentsDecodeTheSame(t *testing.T) {
	cfg := app.Defaults()
	proc := processConfig{}
	require.NoError(t, loadConfigFile(writeConfig(t, oldReadmeDocument), &cfg, &proc))
	require.Equal(t, app.Defaults(), cfg)
	require.Nil(t, proc.MemoryLimit)

	cfg = app.Defaults()
	require.NoError(t, loadConfigFile(writeConfig(t, `{"memoryLimit": 1000, "engines": {"meta": {"etcd": {"endpoints": ["e:1"]}},
		"objects": {"type": "local"}, "wal": {"type": "", "kafka": null}}, "DataNode": {"SYNCPERIOD": "3s"}}`), &cfg, &proc))
	require.EqualValues(t, 1000, *proc.MemoryLimit)
	want := app.Defaults()
	want.Engines.Meta.Etcd.Endpoints = []string{"e:1"}
	want.Engines.WAL.Type = "" // "" is the local WAL, as before
	want.DataNode.SyncPeriod = 3 * time.Second
	require.Equal(t, want, cfg)
	require.NoError(t, cfg.Validate())
}

// TestStandaloneConfigFlagsWin: the file applies to the defaults, and the
// flags given apply over it; the fields the app computes are not settings.
func TestStandaloneConfigFlagsWin(t *testing.T) {
	p := writeConfig(t, `{"dataDir": "/from/file", "addr": "file:1", "metricsAddr": "file:2", "rootPath": "data",
		"proxy": {"boundedStaleness": "1s"}, "walWriter": {"tickInterval": "1s"}}`)
	cfg, _, level, err := standaloneConfig([]string{"--addr", "flag:1", "--config", p, "--log-level", "debug"}, os.Stderr)
	require.NoError(t, err)
	require.Equal(t, "/from/file", cfg.DataDir)
	require.Equal(t, "flag:1", cfg.Addr)
	require.Equal(t, "file:2", cfg.MetricsAddr)
	require.Equal(t, "data", cfg.RootPath)
	require.Equal(t, time.Second, cfg.Proxy.BoundedStaleness)
	require.Equal(t, time.Second, cfg.Writer.TickInterval)
	require.Equal(t, slog.LevelDebug, level)

	for body, want := range map[string]string{
		`{"dataNode": {"pChannels": ["x"]}}`:             `dataNode: unknown field "pChannels"`,
		`{"dataCoord": {"rootPath": "x"}}`:               `dataCoord: unknown field "rootPath"`,
		`{"proxy": {"version": "v9"}}`:                   `proxy: unknown field "version"`,
		`{"wal": {"dir": "/x"}}`:                         `wal: unknown field "dir"`,
		`{"queryNode": {"rootPath": "x"}}`:               `queryNode: unknown field "rootPath"`,
		`{"engines": {"wal": {"kafka": {"linger": 5}}}}`: `engines.wal.kafka.linger: a duration is a string`,
	} {
		_, _, _, err := standaloneConfig([]string{"--config", writeConfig(t, body)}, os.Stderr)
		require.ErrorContains(t, err, want, body)
	}
}

// TestConfigCommand: `strata config` prints a document that reads back to
// the defaults; with --config it prints what the file makes of them and
// fails when the server would refuse it.
func TestConfigCommand(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run([]string{"config"}, &out, io.Discard))
	want := app.Defaults()
	got := app.Defaults()
	require.NoError(t, config.Decode(out.Bytes(), &struct {
		*app.Config
		MemoryLimit *int64 `json:"memoryLimit"`
	}{Config: &got}))
	require.Equal(t, want, got)

	out.Reset()
	require.NoError(t, run([]string{"config", "--config", writeConfig(t, `{"dataCoord": {"maxIdle": "90s"}, "memoryLimit": 5}`)}, &out, io.Discard))
	require.Contains(t, out.String(), `"maxIdle": "1m30s"`)
	require.Contains(t, out.String(), `"memoryLimit": 5`)

	err := run([]string{"config", "--config", writeConfig(t, `{"rootCoord": {"pChannels": 0}}`)}, &out, io.Discard)
	require.ErrorContains(t, err, "rootcoord: pchannels must be in [1, 1024]")
	require.Error(t, run([]string{"config", "extra"}, &out, io.Discard))
}
