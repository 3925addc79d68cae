package importer

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/metastore/embedded"
)

type counter struct{ n uint64 }

func (c *counter) Allocate(_ context.Context, n uint32) (uint64, error) {
	c.n += uint64(n)
	return c.n, nil
}

func openKV(t *testing.T) *embedded.Store {
	t.Helper()
	kv, err := embedded.Open(filepath.Join(t.TempDir(), "meta.db"), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, kv.Close()) })
	return kv
}

func testConfig() Config {
	cfg := Defaults()
	cfg.SegmentBytes = 1 << 20
	return cfg
}

// TestManagerRecords: a submitted job is recorded Pending; after a restart
// a job cut short is Pending again with its progress reset, and finished
// jobs past the retention are forgotten, in memory and in the meta store.
func TestManagerRecords(t *testing.T) {
	ctx := context.Background()
	kv := openKV(t)
	deps := Deps{KV: kv, IDs: &counter{}, Logger: slog.New(slog.DiscardHandler)}
	m, err := New(ctx, testConfig(), deps)
	require.NoError(t, err)
	id, err := m.Submit(ctx, Request{DB: "default", CollectionID: 7, CollectionName: "c", Files: [][]string{{"a.json"}, {"x/id.npy", "x/v.npy"}}})
	require.NoError(t, err)
	j, ok, err := m.Job(ctx, id)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, StatePending, j.State)
	require.Len(t, j.Tasks, 2)

	for req, want := range map[string]Request{
		"unexpected file type":          {Files: [][]string{{"a.txt"}}},
		"absolute path":                 {Files: [][]string{{"/etc/passwd.json"}}},
		"not valid":                     {Files: [][]string{{"a/../b.json"}}},
		"not configured on this server": {Files: [][]string{{"a/insert_log/1/2/3"}}, Options: map[string]string{"backup": "true"}},
		"the timeout option":            {Files: [][]string{{"a.json"}}, Options: map[string]string{"timeout": "soon"}},
		"should not exceed 1024":        {Files: make([][]string, 1025)},
		"accepts only one file":         {Files: [][]string{{"a.json", "b.json"}}},
		"inconsistency in file type":    {Files: [][]string{{"a.npy", "b.json"}}},
	} {
		if len(want.Files) == 1025 {
			for i := range want.Files {
				want.Files[i] = []string{"a.json"}
			}
		}
		_, err := m.Submit(ctx, want)
		require.ErrorContains(t, err, req)
		require.Equal(t, errcode.ImportFailed, errcode.CodeOf(err), req)
	}

	// A job that was importing when the server stopped, and two finished ones.
	running := Job{
		ID: 100, CollectionID: 7, State: StateImporting, Progress: 40, ImportedRows: 9,
		Tasks: []Task{{Files: []string{"a.json"}, State: StateImporting, Progress: 80, ImportedRows: 9}},
	}
	old := Job{ID: 101, State: StateCompleted, CompleteTime: time.Now().Add(-4 * time.Hour).Format(timeLayout)}
	recent := Job{ID: 102, State: StateFailed, CompleteTime: time.Now().Add(-time.Hour).Format(timeLayout)}
	for _, j := range []Job{running, old, recent} {
		b, err := catalog.Marshal(&j)
		require.NoError(t, err)
		require.NoError(t, kv.Txn(ctx, metastore.Put(JobKey(j.ID), b)))
	}
	m, err = New(ctx, testConfig(), deps)
	require.NoError(t, err)
	j, ok, err = m.Job(ctx, 100)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, StatePending, j.State)
	require.Zero(t, j.Progress)
	require.Equal(t, Task{Files: []string{"a.json"}, State: StatePending}, j.Tasks[0])
	require.Equal(t, []int64{id, 100}, m.queue, "queued in ID order")

	m.expire(ctx, time.Now())
	_, ok, err = m.Job(ctx, 101)
	require.NoError(t, err)
	require.False(t, ok)
	_, ok, err = m.Job(ctx, 102)
	require.NoError(t, err)
	require.True(t, ok)
	kvs, err := kv.Scan(ctx, JobKey(101))
	require.NoError(t, err)
	require.Empty(t, kvs)
	all, err := m.Jobs(ctx, "", 0)
	require.NoError(t, err)
	require.Len(t, all, 3)
	some, err := m.Jobs(ctx, "default", 7)
	require.NoError(t, err)
	require.Len(t, some, 1)
}
