package e2e

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/msgpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/metastore/embedded"
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
	get := fileGetter(filepath.Join(dir, "storage"))
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
	startRe := regexp.MustCompile(`start (\d+)`)
	for _, p := range log.PChannels() {
		end, err := log.End(ctx, p)
		if err != nil {
			t.Logf("wal %s: %v", p, err)
			continue
		}
		from := int64(0)
		sc, err := wal.OpenScanner(ctx, log, p, from)
		if err == nil {
			_, err = sc.Next(ctx)
			sc.Close()
		}
		if errors.Is(err, wal.ErrTruncated) {
			if m := startRe.FindStringSubmatch(err.Error()); m != nil {
				from, _ = strconv.ParseInt(m[1], 10, 64)
			}
		}
		t.Logf("wal %s: offsets %d to %d", p, from, end)
		sc, err = wal.OpenScanner(ctx, log, p, from)
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

// fileGetter reads objects of a local object store directory.
type fileGetter string

// Get returns the object's bytes.
func (f fileGetter) Get(_ context.Context, key string) ([]byte, error) {
	return os.ReadFile(filepath.Join(string(f), filepath.FromSlash(key)))
}

// mismatchedKeys returns the keys (at most limit) whose presence differs
// from the writers' acknowledged state; keys of a pending request are skipped.
func mismatchedKeys(ctx context.Context, c *milvusclient.Client, ws []*crashWriter, limit int) ([]int64, error) {
	var out []int64
	for _, w := range ws {
		pend := map[int64]bool{}
		if w.pending != nil {
			for _, k := range w.pending.keys {
				pend[k] = true
			}
		}
		base := int64(w.g) * crashKeySpace
		got := map[int64]bool{}
		const chunk = 20000
		for lo := int64(0); lo < w.next; lo += chunk {
			rs, err := c.Query(ctx, milvusclient.NewQueryOption(crashColl).
				WithFilter(fmt.Sprintf("id >= %d and id < %d", base+lo, base+lo+chunk)).
				WithOutputFields("id").WithConsistencyLevel(entity.ClStrong))
			if err != nil {
				return out, err
			}
			for i := 0; i < rs.ResultCount; i++ {
				id, err := rs.GetColumn("id").GetAsInt64(i)
				if err != nil {
					return out, err
				}
				got[id] = true
			}
		}
		for k, st := range w.state {
			if !pend[k] && st.present != got[k] && len(out) < limit {
				out = append(out, k)
			}
		}
	}
	return out, nil
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

// traceHealing checks the served rows against the writers' state without
// failing; on a difference it logs how it evolves over the next seconds
// (keys missing or extra, count(*) against distinct keys, served segments).
func traceHealing(ctx context.Context, t *testing.T, c *milvusclient.Client, ws []*crashWriter) {
	t.Helper()
	state := func() (int, []int64, int64, int, string) {
		bad, _ := mismatchedKeys(ctx, c, ws, 1<<30)
		var count int64
		distinct := 0
		for _, w := range ws {
			base := int64(w.g) * crashKeySpace
			n, d, err := countRange(ctx, c, base, base+w.next)
			if err != nil {
				return len(bad), bad, -1, -1, err.Error()
			}
			count += n
			distinct += d
		}
		return len(bad), bad[:min(len(bad), 5)], count, distinct, querySegments(ctx, c)
	}
	start := time.Now()
	n, keys, count, distinct, segs := state()
	if n == 0 && count == int64(distinct) {
		return
	}
	t.Logf("at +0: %d keys differ from the acknowledged state (e.g. %v), count(*) %d, distinct %d, served:%s", n, keys, count, distinct, segs)
	for range 20 {
		time.Sleep(100 * time.Millisecond)
		n, keys, count, distinct, segs = state()
		t.Logf("at +%v: %d keys differ (e.g. %v), count(*) %d, distinct %d, served:%s", time.Since(start).Round(time.Millisecond), n, keys, count, distinct, segs)
		if n == 0 && count == int64(distinct) {
			break
		}
	}
}
