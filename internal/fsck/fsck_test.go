package fsck

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/metastore/embedded"
)

// TestCheckReport: the report gathers every checker's damage and counts,
// and a checker that cannot run makes the report incomplete, not clean.
func TestCheckReport(t *testing.T) {
	ok := Checker{Name: "ok", Check: func(context.Context, string) (Result, error) {
		return Result{Stats: Stats{Files: 2, Bytes: 10}}, nil
	}}
	bad := Checker{Name: "bad", Check: func(context.Context, string) (Result, error) {
		return Result{Damage: []Damage{{
			Kind: KindBinlog, Collection: "c", CollectionID: 1, SegmentID: 7, Rows: 5,
			File: "files/insert_log/1/2/7/100/9", Problem: "file is missing",
		}}}, nil
	}}
	broken := Checker{Name: "broken", Check: func(context.Context, string) (Result, error) {
		return Result{}, errors.New("unreadable")
	}}
	for _, tc := range []struct {
		name     string
		checkers []Checker
		clean    bool
		lines    []string
	}{
		{"clean", []Checker{ok}, true, []string{"clean: no damage found", "2 files (10 bytes)"}},
		{"damaged", []Checker{ok, bad}, false, []string{
			`DAMAGED binlog: collection="c"(1) segment=7 file=files/insert_log/1/2/7/100/9: file is missing`,
			"damaged: 1 problems in 1 segments", `segment 7 of collection "c" (1): 5 rows`,
		}},
		{"incomplete", []Checker{ok, broken}, false, []string{"NOT CHECKED broken: unreadable", "incomplete:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Check(context.Background(), "d", tc.checkers)
			require.Equal(t, tc.clean, r.Clean())
			var b bytes.Buffer
			require.NoError(t, r.WriteText(&b))
			for _, l := range tc.lines {
				require.Contains(t, b.String(), l)
			}
			b.Reset()
			require.NoError(t, r.WriteJSON(&b))
			require.Contains(t, b.String(), `"clean":`)
		})
	}
}

// TestDropSegment: a repair marks the segment Dropped with DroppedAt, says
// what was lost, refuses an unknown or dropped segment, never creates a
// meta store, and refuses while another process (here: an open store)
// holds the file.
func TestDropSegment(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	kv, err := embedded.Open(filepath.Join(dir, MetaFile), nil)
	require.NoError(t, err)
	seg := catalog.SegmentInfo{
		ID: 7, CollectionID: 1, PartitionID: 2, VChannel: "v", State: catalog.SegmentFlushed,
		Level: catalog.LevelL1, NumRows: 123, Deltalogs: []catalog.Binlog{{LogID: 3, Entries: 4}},
	}
	b, err := catalog.Marshal(&seg)
	require.NoError(t, err)
	require.NoError(t, kv.Txn(ctx, metastore.Put(catalog.SegmentKey(1, 7), b)))

	_, err = DropSegment(ctx, dir, 7, time.UnixMilli(1000))
	require.ErrorIs(t, err, embedded.ErrLocked, "the server holds the meta store")
	require.NoError(t, kv.Close())

	loss, err := DropSegment(ctx, dir, 7, time.UnixMilli(1000))
	require.NoError(t, err)
	require.Equal(t, int64(123), loss.Rows)
	require.Equal(t, int64(4), loss.Deletes)
	require.Contains(t, loss.String(), "123 rows and 4 deletes lost")

	_, err = DropSegment(ctx, dir, 7, time.UnixMilli(2000))
	require.ErrorIs(t, err, ErrNoSegment)
	_, err = DropSegment(ctx, dir, 8, time.UnixMilli(2000))
	require.ErrorIs(t, err, ErrNoSegment)

	ro, err := embedded.OpenReadOnly(filepath.Join(dir, MetaFile), nil)
	require.NoError(t, err)
	v, err := ro.Get(ctx, catalog.SegmentKey(1, 7))
	require.NoError(t, err)
	var got catalog.SegmentInfo
	require.NoError(t, catalog.Unmarshal(v, &got))
	require.Equal(t, catalog.SegmentDropped, got.State)
	require.Equal(t, int64(1000), got.DroppedAt)
	require.NoError(t, ro.Close())

	empty := t.TempDir()
	_, err = DropSegment(ctx, empty, 7, time.Now())
	require.Error(t, err)
	_, err = os.Stat(filepath.Join(empty, MetaFile))
	require.ErrorIs(t, err, os.ErrNotExist, "a repair never creates a meta store")
}
