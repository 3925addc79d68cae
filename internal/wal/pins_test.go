package wal_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/wal"
	wallocal "github.com/strata-db/strata/internal/wal/local"
)

// TestPinsHoldTruncation: truncation behind the checkpoints stops at the
// lowest pin of the pchannel, a pin taken before the start offset is known
// holds everything, and released pins hold nothing.
func TestPinsHoldTruncation(t *testing.T) {
	ctx := context.Background()
	cfg := wallocal.Defaults()
	cfg.Dir, cfg.SegmentSize = filepath.Join(t.TempDir(), "wal"), 64
	log, err := wallocal.Open(cfg, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, log.Close()) }()
	for i := 0; i < 40; i++ {
		res := <-log.AppendAsync("p0", [][]byte{make([]byte, 32)})
		require.NoError(t, res.Err)
		res = <-log.AppendAsync("p1", [][]byte{make([]byte, 32)})
		require.NoError(t, res.Err)
	}
	readable := func(ch string, off int64) bool {
		r, err := log.Read(ctx, ch, off)
		require.NoError(t, err)
		defer func() { require.NoError(t, r.Close()) }()
		_, err = r.Next(ctx)
		if err != nil {
			require.ErrorIs(t, err, wal.ErrTruncated)
			return false
		}
		return true
	}
	pins := wal.NewPins(log)
	all := pins.Pin("p0", 0) // before the reader knows where it starts
	require.NoError(t, pins.Truncate(ctx, "p0", 30))
	require.True(t, readable("p0", 0), "a pin at 0 holds every record")
	pins.Move(all, 10)
	require.EqualValues(t, 10, pins.Floor("p0", 30))
	require.EqualValues(t, 30, pins.Floor("p1", 30), "pins hold only their pchannel")
	require.NoError(t, pins.Truncate(ctx, "p0", 30))
	require.True(t, readable("p0", 10), "records at and after the pin stay")
	require.False(t, readable("p0", 0), "records before the pin may go")
	require.NoError(t, pins.Truncate(ctx, "p1", 30))
	require.False(t, readable("p1", 10))
	pins.Release(all)
	pins.Release(all)
	require.NoError(t, pins.Truncate(ctx, "p0", 30))
	require.False(t, readable("p0", 10), "a released pin holds nothing")
	require.True(t, readable("p0", 30))
}
