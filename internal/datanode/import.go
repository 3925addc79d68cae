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
