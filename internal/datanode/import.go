package datanode

import (
	"context"
	"errors"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/storage"
)

// WriteImportSegment writes bulk-imported rows (every field, system fields 0
// and 1 included) as the files of one new flushed segment of vchannel:
// binlogs, a stats log and the merged stats file, as a compaction output is
// written. Nothing records the segment: the importer commits it with the
// rest of its job, or discards it.
func (n *Node) WriteImportSegment(ctx context.Context, coll *catalog.Collection, partition int64, vchannel string,
	cols map[int64]column.Column,
) (catalog.SegmentInfo, error) {
	tsCol, ok := cols[1].(*column.Ints)
	if !ok || tsCol.Len() == 0 {
		return catalog.SegmentInfo{}, errors.New("datanode: an import segment needs rows with timestamps")
	}
	rows := int64(tsCol.Len())
	tsFrom, tsTo := uint64(tsCol.Data[0]), uint64(tsCol.Data[0])
	for _, t := range tsCol.Data {
		tsFrom, tsTo = min(tsFrom, uint64(t)), max(tsTo, uint64(t))
	}
	id, err := n.ids.Allocate(ctx, 1)
	if err != nil {
		return catalog.SegmentInfo{}, err
	}
	seg := int64(id)
	files, err := n.writeSegment(ctx, coll, partition, seg, cols, rows, tsFrom, tsTo)
	if err != nil {
		return catalog.SegmentInfo{}, err
	}
	pk := coll.PKField().GetFieldID()
	data, err := storage.MarshalCompoundStats([]*storage.PKStats{files.stats})
	if err != nil {
		return catalog.SegmentInfo{}, err
	}
	if err := n.objects.Put(ctx, storage.CompoundStatsLogKey(n.cfg.RootPath, coll.ID, partition, seg, pk), data); err != nil {
		return catalog.SegmentInfo{}, err
	}
	files.statslogs[pk] = append(files.statslogs[pk], catalog.Binlog{LogID: storage.CompoundStatsLogID, Size: int64(len(data))})
	now := time.Now().UnixMilli()
	return catalog.SegmentInfo{
		ID: seg, CollectionID: coll.ID, PartitionID: partition, VChannel: vchannel,
		State: catalog.SegmentFlushed, Level: catalog.LevelL1, NumRows: rows, MaxRows: rows,
		Binlogs: files.binlogs, Statslogs: files.statslogs, SyncedOffset: -1, FlushTS: tsTo,
		CreatedAt: now, LastSyncAt: now, Sorted: true,
	}, nil
}

// WriteImportDeletes writes an L0 import's deletes of vchannel (keys and
// their own timestamps) as the delta log of one new L0 segment for all
// partitions, as a flush writes deletes. Nothing records the segment: the
// importer commits it with the rest of its job, or discards it.
func (n *Node) WriteImportDeletes(ctx context.Context, coll *catalog.Collection, vchannel string,
	pks column.Column, tss []uint64,
) (catalog.SegmentInfo, error) {
	if len(tss) == 0 || pks.Len() != len(tss) {
		return catalog.SegmentInfo{}, errors.New("datanode: an import L0 segment needs deletes with timestamps")
	}
	first, err := n.ids.Allocate(ctx, 2)
	if err != nil {
		return catalog.SegmentInfo{}, err
	}
	segID, logID := int64(first), int64(first)+1
	const allPartitions = -1
	tsFrom, tsTo := tss[0], tss[0]
	for _, t := range tss {
		tsFrom, tsTo = min(tsFrom, t), max(tsTo, t)
	}
	data, err := storage.EncodeDeltaLog(storage.Descriptor{
		CollectionID: coll.ID, PartitionID: allPartitions, SegmentID: segID, FieldID: -1,
	}, coll.PKField().GetDataType(), pks, tss)
	if err != nil {
		return catalog.SegmentInfo{}, err
	}
	if err := n.objects.Put(ctx, storage.DeltaLogKey(n.cfg.RootPath, coll.ID, allPartitions, segID, logID), data); err != nil {
		return catalog.SegmentInfo{}, err
	}
	now := time.Now().UnixMilli()
	return catalog.SegmentInfo{
		ID: segID, CollectionID: coll.ID, PartitionID: allPartitions, VChannel: vchannel,
		State: catalog.SegmentFlushed, Level: catalog.LevelL0, NumRows: int64(len(tss)),
		Deltalogs:    []catalog.Binlog{{LogID: logID, Entries: int64(len(tss)), TsFrom: tsFrom, TsTo: tsTo, Size: int64(len(data))}},
		SyncedOffset: -1, FlushTS: tsTo, CreatedAt: now, LastSyncAt: now,
	}, nil
}
