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
			"compaction": {"l0Count": 2, "l0MaxAge": "5s", "minSmallSegments": 3, "deletedRatio": 0.1}},
		"dataNode": {"syncPeriod": "4s"},
		"wal": {"segmentSize": 4194304}
	}`)
	require.NoError(t, loadConfigFile(p, &cfg))
	require.EqualValues(t, 1<<20, cfg.DataCoord.SegmentMaxSize)
	require.Equal(t, 100*time.Millisecond, cfg.DataCoord.CheckInterval)
	require.Equal(t, time.Second, cfg.DataCoord.GCInterval)
	require.Equal(t, 2*time.Second, cfg.DataCoord.DroppedRetention)
	require.Equal(t, 3*time.Second, cfg.DataCoord.OrphanRetention)
	require.Equal(t, 2, cfg.DataCoord.Compaction.L0Count)
	require.Equal(t, 5*time.Second, cfg.DataCoord.Compaction.L0MaxAge)
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
			require.Error(t, loadConfigFile(writeConfig(t, body), &cfg))
		})
	}
	cfg := app.Defaults()
	require.Error(t, loadConfigFile(filepath.Join(t.TempDir(), "missing.json"), &cfg))
}

func TestStandaloneRejectsInvalidConfig(t *testing.T) {
	p := writeConfig(t, `{"dataCoord": {"segmentMaxSize": -1}}`)
	err := run([]string{"standalone", "--config", p, "--data-dir", t.TempDir(), "--addr", "127.0.0.1:0", "--metrics-addr", ""}, os.Stdout, os.Stderr)
	require.ErrorContains(t, err, "segment max size")
}
