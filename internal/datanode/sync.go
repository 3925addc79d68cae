package datanode

import (
	"context"
	"fmt"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/storage"
)

// segmentFiles are the files written for one batch of a segment's rows.
type segmentFiles struct {
	binlogs   map[int64][]catalog.Binlog
	statslogs map[int64][]catalog.Binlog
	stats     *storage.PKStats
}

// writeSegment writes one insert binlog per field (system fields included)
// and one PK stats log for rows of a segment, as Milvus storage v1 does.
// The rows are written in primary-key order (see sortByPK): every batch is
// a sorted run, so a segment written in one batch is sorted
// (catalog.SegmentInfo.Sorted).
func (n *Node) writeSegment(ctx context.Context, coll *catalog.Collection, part, seg int64,
	cols map[int64]column.Column, rows int64, tsFrom, tsTo uint64,
) (*segmentFiles, error) {
	root := n.cfg.RootPath
	pk := coll.PKField()
	cols, err := sortByPK(cols, pk.GetFieldID())
	if err != nil {
		return nil, fmt.Errorf("sort segment %d: %w", seg, err)
	}
	first, err := n.ids.Allocate(ctx, uint32(len(coll.Schema.GetFields())+1))
	if err != nil {
		return nil, err
	}
	out := &segmentFiles{binlogs: map[int64][]catalog.Binlog{}, statslogs: map[int64][]catalog.Binlog{}}
	logID := int64(first)
	for _, f := range coll.Schema.GetFields() {
		col := cols[f.GetFieldID()]
		d := storage.Descriptor{
			CollectionID: coll.ID, PartitionID: part, SegmentID: seg,
			FieldID: f.GetFieldID(), StartTimestamp: tsFrom, EndTimestamp: tsTo,
		}
		data, err := storage.EncodeInsertLog(d, f, col)
		if err != nil {
			return nil, fmt.Errorf("encode segment %d field %d: %w", seg, f.GetFieldID(), err)
		}
		key := storage.InsertLogKey(root, coll.ID, part, seg, f.GetFieldID(), logID)
		if err := n.objects.Put(ctx, key, data); err != nil {
			return nil, err
		}
		out.binlogs[f.GetFieldID()] = []catalog.Binlog{{
			LogID: logID, Entries: rows, TsFrom: tsFrom,
			TsTo: tsTo, Size: int64(len(data)), MemSize: int64(col.MemorySize()),
		}}
		logID++
	}
	st, err := pkStats(pk, cols[pk.GetFieldID()])
	if err != nil {
		return nil, err
	}
	data, err := storage.MarshalStats(st)
	if err != nil {
		return nil, err
	}
	key := storage.StatsLogKey(root, coll.ID, part, seg, pk.GetFieldID(), logID)
	if err := n.objects.Put(ctx, key, data); err != nil {
		return nil, err
	}
	out.statslogs[pk.GetFieldID()] = []catalog.Binlog{{LogID: logID, Entries: rows, TsFrom: tsFrom, TsTo: tsTo, Size: int64(len(data))}}
	out.stats = st
	return out, nil
}

// sync runs a sync job: it writes the buffers of the job's segments (flush:
// and marks them Flushed) and its delete buffer as a new L0 segment, then
// reports everything and the job's checkpoint to the coordinator in one
// call. Every earlier job of the vchannel has completed.
func (w *syncWorker) sync(ctx context.Context, job *syncJob) error {
	n := w.node
	coll := job.coll
	report := catalog.SyncReport{VChannel: w.vchannel, Epoch: w.epoch}
	for _, js := range job.segs {
		id, b := js.id, js.buf
		var info catalog.SegmentInfo
		var known bool
		if job.flush {
			// Read now, not when the job was planned: the record holds the
			// stats logs of the jobs before this one.
			var err error
			if info, known, err = n.coord.Segment(ctx, id); err != nil {
				return err
			}
			if known && info.State == catalog.SegmentFlushed && info.SyncedOffset >= job.lastOffset {
				// This job's flush was recorded and its answer lost (this
				// is a retry): writing the compound stats log again would
				// replace the file the record names.
				continue
			}
		}
		ss := catalog.SegmentSync{
			SegmentID: id, CollectionID: coll.ID, Flushed: job.flush,
			Binlogs: map[int64][]catalog.Binlog{}, Statslogs: map[int64][]catalog.Binlog{}, SyncedOffset: job.lastOffset,
		}
		var stats []*storage.PKStats
		if b != nil && b.rows > 0 {
			ss.PartitionID = b.partition
			ss.Rows = b.rows
			start := b.start
			ss.StartPosition = &start
			files, err := n.writeSegment(ctx, coll, b.partition, id, b.cols, b.rows, b.tsFrom, b.tsTo)
			if err != nil {
				return err
			}
			ss.Binlogs, ss.Statslogs = files.binlogs, files.statslogs
			stats = append(stats, files.stats)
		}
		if job.flush {
			if b == nil && known {
				ss.PartitionID = info.PartitionID
			}
			if err := n.writeCompoundStats(ctx, coll, id, ss.PartitionID, info, known, stats, &ss); err != nil {
				return err
			}
		}
		report.Segments = append(report.Segments, ss)
	}
	if job.dels != nil {
		l0, err := n.writeDeltas(ctx, coll, w.vchannel, job.dels, job.lastOffset)
		if err != nil {
			return err
		}
		report.L0 = l0
	}
	report.Checkpoint = job.cp
	if err := n.coord.Synced(ctx, report); err != nil {
		return err
	}
	w.reported = job.cp
	return nil
}

func pkStats(pk *schemapb.FieldSchema, col column.Column) (*storage.PKStats, error) {
	st := storage.NewPKStats(pk.GetFieldID(), pk.GetDataType(), uint(col.Len()))
	switch c := col.(type) {
	case *column.Ints:
		for _, v := range c.Data {
			st.AddInt64(v)
		}
	case *column.Strings:
		for _, v := range c.Data {
			st.AddString(v)
		}
	default:
		return nil, fmt.Errorf("datanode: primary key of type %s", col.Type())
	}
	return st, nil
}

// writeCompoundStats writes the merged stats file `1` of a flushed segment:
// every per-sync stats log of its history plus this sync's.
func (n *Node) writeCompoundStats(ctx context.Context, coll *catalog.Collection, id, part int64, info catalog.SegmentInfo,
	known bool, current []*storage.PKStats, ss *catalog.SegmentSync,
) error {
	pk := coll.PKField()
	var all []*storage.PKStats
	if known {
		for _, l := range info.Statslogs[pk.GetFieldID()] {
			if l.LogID == 1 {
				continue
			}
			key := storage.StatsLogKey(n.cfg.RootPath, coll.ID, info.PartitionID, id, pk.GetFieldID(), l.LogID)
			data, err := n.objects.Get(ctx, key)
			if err != nil {
				return fmt.Errorf("read stats %s: %w", key, err)
			}
			st, err := storage.UnmarshalStats(data)
			if err != nil {
				return fmt.Errorf("decode stats %s: %w", key, err)
			}
			all = append(all, st...)
		}
	}
	all = append(all, current...)
	if len(all) == 0 {
		return nil // an empty segment has no stats
	}
	data, err := storage.MarshalCompoundStats(all)
	if err != nil {
		return err
	}
	key := storage.CompoundStatsLogKey(n.cfg.RootPath, coll.ID, part, id, pk.GetFieldID())
	if err := n.objects.Put(ctx, key, data); err != nil {
		return err
	}
	ss.Statslogs[pk.GetFieldID()] = append(ss.Statslogs[pk.GetFieldID()], catalog.Binlog{LogID: 1, Size: int64(len(data))})
	return nil
}

// writeDeltas writes a delete buffer as the delta log of a new L0 segment
// of vchannel, synced through lastOffset.
func (n *Node) writeDeltas(ctx context.Context, coll *catalog.Collection, vchannel string, d *deleteBuffer,
	lastOffset int64,
) (*catalog.SegmentInfo, error) {
	first, err := n.ids.Allocate(ctx, 2)
	if err != nil {
		return nil, err
	}
	segID, logID := int64(first), int64(first)+1
	const allPartitions = -1
	tss := d.timestamps()
	tsFrom, tsTo := tss[0], tss[0]
	for _, t := range tss {
		tsFrom, tsTo = min(tsFrom, t), max(tsTo, t)
	}
	data, err := storage.EncodeDeltaLog(storage.Descriptor{
		CollectionID: coll.ID, PartitionID: allPartitions,
		SegmentID: segID, FieldID: -1,
	}, coll.PKField().GetDataType(), d.pks, tss)
	if err != nil {
		return nil, fmt.Errorf("encode delta log: %w", err)
	}
	key := storage.DeltaLogKey(n.cfg.RootPath, coll.ID, allPartitions, segID, logID)
	if err := n.objects.Put(ctx, key, data); err != nil {
		return nil, err
	}
	return &catalog.SegmentInfo{
		ID: segID, CollectionID: coll.ID, PartitionID: allPartitions, VChannel: vchannel,
		State: catalog.SegmentFlushed, Level: catalog.LevelL0, NumRows: int64(len(tss)),
		Deltalogs:     []catalog.Binlog{{LogID: logID, Entries: int64(len(tss)), TsFrom: tsFrom, TsTo: tsTo, Size: int64(len(data))}},
		StartPosition: &d.start, SyncedOffset: lastOffset, CreatedAt: time.Now().UnixMilli(),
	}, nil
}
