package e2e

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/msgpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/metastore/embedded"
	objlocal "github.com/strata-db/strata/internal/objstore/local"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/wal"
	"github.com/strata-db/strata/internal/wal/local"
)

// Diagnostics for the crash tests: when a check fails they name the keys
// involved and everything the data directory still says about them, so a
// rare failure can be understood from one log.

// countRange returns count(*) and the number of distinct rows a query
// returns for keys in [lo, hi).
func countRange(ctx context.Context, c *milvusclient.Client, lo, hi int64) (count int64, distinct int, err error) {
	filter := fmt.Sprintf("id >= %d and id < %d", lo, hi)
	rs, err := c.Query(ctx, milvusclient.NewQueryOption(crashColl).WithFilter(filter).
		WithOutputFields("count(*)").WithConsistencyLevel(entity.ClStrong))
	if err != nil {
		return 0, 0, err
	}
	if count, err = rs.GetColumn("count(*)").GetAsInt64(0); err != nil {
		return 0, 0, err
	}
	rs, err = c.Query(ctx, milvusclient.NewQueryOption(crashColl).WithFilter(filter).
		WithOutputFields("id").WithConsistencyLevel(entity.ClStrong))
	if err != nil {
		return 0, 0, err
	}
	return count, rs.ResultCount, nil
}

// duplicateKeys returns the keys count(*) counts more than once (at most
// limit), bisecting the writers' key ranges.
func duplicateKeys(ctx context.Context, c *milvusclient.Client, ws []*crashWriter, limit int) ([]int64, error) {
	var out []int64
	var walk func(lo, hi int64) error
	walk = func(lo, hi int64) error {
		if len(out) >= limit {
			return nil
		}
		count, distinct, err := countRange(ctx, c, lo, hi)
		if err != nil || count == int64(distinct) {
			return err
		}
		if hi-lo == 1 {
			out = append(out, lo)
			return nil
		}
		mid := lo + (hi-lo)/2
		if err := walk(lo, mid); err != nil {
			return err
		}
		return walk(mid, hi)
	}
	for _, w := range ws {
		base := int64(w.g) * crashKeySpace
		if err := walk(base, base+w.next); err != nil {
			return out, err
		}
	}
	return out, nil
}

// keyHistory logs, for the stopped server in dir, every trace of the keys:
// rows in the segments' insert logs (with the segment's state), deletes in
// delta logs, and the WAL messages still kept that insert or delete them,
// plus the vchannel checkpoints.
func keyHistory(t *testing.T, dir string, keys []int64) {
	t.Helper()
	if len(keys) == 0 {
		return
	}
	want := map[int64]bool{}
	for _, k := range keys {
		want[k] = true
	}
	t.Logf("history of keys %v", keys)
	ctx := context.Background()
	meta, err := embedded.Open(filepath.Join(dir, "meta.db"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Logf("open meta: %v", err)
		return
	}
	cps, err := meta.Scan(ctx, catalog.CheckpointPrefix)
	if err != nil {
		t.Logf("scan checkpoints: %v", err)
	}
	for _, kv := range cps {
		var cp catalog.ChannelCheckpoint
		if catalog.Unmarshal(kv.Value, &cp) == nil {
			t.Logf("checkpoint %s: offset %d ts %d deltaSynced %d", cp.VChannel, cp.Position.Offset, cp.Position.TimeTick, cp.DeltaSyncedOffset)
		}
	}
	_ = meta.Close()
	recs := segmentRecords(t, dir)
	get, err := objlocal.Open(filepath.Join(dir, "storage"))
	if err != nil {
		t.Logf("open storage: %v", err)
		return
	}
	ids := make([]int64, 0, len(recs))
	for id := range recs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	pkField := &schemapb.FieldSchema{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64}
	tsField := &schemapb.FieldSchema{FieldID: 1, Name: "ts", DataType: schemapb.DataType_Int64}
	for _, id := range ids {
		s := recs[id]
		desc := fmt.Sprintf("segment %d (%s L%d rows %d synced %d from %v)", s.ID, s.State, s.Level, s.NumRows, s.SyncedOffset, s.CompactedFrom)
		if s.Level != catalog.LevelL0 && len(s.Binlogs[100]) > 0 {
			loc := storage.FieldLogs{Root: storage.DefaultRootPath, Collection: s.CollectionID, Partition: s.PartitionID, ID: s.ID}
			loc.LogIDs = s.LogIDs(100)
			pks, err1 := storage.ReadField(ctx, get, loc, pkField)
			loc.LogIDs = s.LogIDs(1)
			tss, err2 := storage.ReadField(ctx, get, loc, tsField)
			if err := errors.Join(err1, err2); err != nil {
				t.Logf("%s: %v", desc, err)
			} else {
				p, ts := pks.(*column.Ints), tss.(*column.Ints)
				for r, k := range p.Data {
					if want[k] {
						t.Logf("key %d: row %d of %s, ts %d", k, r, desc, ts.Data[r])
					}
				}
			}
		}
		for _, l := range s.Deltalogs {
			data, err := get.Get(ctx, storage.DeltaLogKey(storage.DefaultRootPath, s.CollectionID, s.PartitionID, s.ID, l.LogID))
			if err != nil {
				t.Logf("%s delta log %d: %v", desc, l.LogID, err)
				continue
			}
			pks, tss, err := storage.DecodeDeltaLog(data)
			if err != nil {
				t.Logf("%s delta log %d: %v", desc, l.LogID, err)
				continue
			}
			if p, ok := pks.(*column.Ints); ok {
				for r, k := range p.Data {
					if want[k] {
						t.Logf("key %d: deleted at ts %d in delta log %d of %s", k, tss[r], l.LogID, desc)
					}
				}
			}
		}
	}
	walHistory(t, filepath.Join(dir, "wal"), want)
}

// walHistory logs the WAL messages still kept that touch the keys.
func walHistory(t *testing.T, walDir string, want map[int64]bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	log, err := local.Open(local.Config{Dir: walDir}, nil)
	if err != nil {
		t.Logf("open wal: %v", err)
		return
	}
	defer log.Close()
	for _, p := range log.PChannels() {
		end, err1 := log.End(ctx, p)
		from, err2 := log.Start(p)
		if err := errors.Join(err1, err2); err != nil {
			t.Logf("wal %s: %v", p, err)
			continue
		}
		t.Logf("wal %s: offsets %d to %d", p, from, end)
		sc, err := wal.OpenScanner(ctx, log, p, from)
		if err != nil {
			t.Logf("wal %s: %v", p, err)
			continue
		}
		for {
			e, err := sc.Next(ctx)
			if err != nil {
				t.Logf("wal %s: %v", p, err)
				break
			}
			m := e.Message
			switch m.Type {
			case wal.TypeInsert:
				req := &msgpb.InsertRequest{}
				if proto.Unmarshal(m.Payload, req) != nil {
					continue
				}
				for _, fd := range req.GetFieldsData() {
					if fd.GetFieldId() != 100 {
						continue
					}
					for r, k := range fd.GetScalars().GetLongData().GetData() {
						if want[k] {
							t.Logf("key %d: wal %s offset %d ts %d insert row %d into segment %d (%s)", k, p, e.Position.Offset, m.TimeTick, r, req.GetSegmentID(), m.VChannel)
						}
					}
				}
			case wal.TypeDelete:
				req := &msgpb.DeleteRequest{}
				if proto.Unmarshal(m.Payload, req) != nil {
					continue
				}
				for _, k := range req.GetPrimaryKeys().GetIntId().GetData() {
					if want[k] {
						t.Logf("key %d: wal %s offset %d ts %d delete (%s)", k, p, e.Position.Offset, m.TimeTick, m.VChannel)
					}
				}
				for _, k := range req.GetInt64PrimaryKeys() {
					if want[k] {
						t.Logf("key %d: wal %s offset %d ts %d delete (%s)", k, p, e.Position.Offset, m.TimeTick, m.VChannel)
					}
				}
			case wal.TypeFlush:
				ids, _ := wal.DecodeFlush(m.Payload)
				t.Logf("wal %s offset %d ts %d flush %v (%s)", p, e.Position.Offset, m.TimeTick, ids, m.VChannel)
			}
			if e.Position.Offset >= end-1 && !e.More {
				break
			}
		}
		sc.Close()
	}
}

// mismatchedKeys returns the keys (at most limit) whose presence in s
// differs from the writers' acknowledged state; keys of a pending request
// are skipped.
func mismatchedKeys(s servedRows, ws []*crashWriter, limit int) []int64 {
	var out []int64
	for _, w := range ws {
		pend := map[int64]bool{}
		if w.pending != nil {
			for _, k := range w.pending.keys {
				pend[k] = true
			}
		}
		for k, st := range w.state {
			if _, present := s.vals[k]; !pend[k] && st.present != present && len(out) < limit {
				out = append(out, k)
			}
		}
	}
	return out
}

// querySegments describes the segments the query node serves for the
// crash collection: ID, growing or sealed, rows.
func querySegments(ctx context.Context, c *milvusclient.Client) string {
	resp, err := c.GetService().GetQuerySegmentInfo(ctx, &milvuspb.GetQuerySegmentInfoRequest{CollectionName: crashColl})
	if err != nil {
		return err.Error()
	}
	out := ""
	for _, s := range resp.GetInfos() {
		out += fmt.Sprintf(" %d/%s/%d", s.GetSegmentID(), s.GetState(), s.GetNumRows())
	}
	return out
}

// observeTracing is observe, except that when what it reads differs from
// the writers' state it first logs how that evolves over the next seconds
// (keys missing or extra, count(*) against distinct keys, served segments);
// the checks apply to the first read.
func observeTracing(ctx context.Context, t *testing.T, c *milvusclient.Client, ws []*crashWriter) map[int64]int64 {
	t.Helper()
	first, err := readServed(ctx, c, ws)
	require.NoError(t, err)
	start := time.Now()
	for s, i := first, 0; i <= 20; i++ {
		bad := mismatchedKeys(s, ws, 1<<30)
		if len(bad) == 0 && s.count == int64(len(s.vals)) && len(s.repeated) == 0 {
			break
		}
		t.Logf("at +%v: %d keys differ from the acknowledged state (e.g. %v), count(*) %d, distinct %d, served:%s",
			time.Since(start).Round(time.Millisecond), len(bad), bad[:min(len(bad), 5)], s.count, len(s.vals), querySegments(ctx, c))
		if i == 20 {
			break
		}
		time.Sleep(100 * time.Millisecond)
		if s, err = readServed(ctx, c, ws); err != nil {
			t.Logf("reading again: %v", err)
			break
		}
	}
	return first.check(t)
}
