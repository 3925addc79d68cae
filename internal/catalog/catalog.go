// Package catalog defines Strata's durable metadata records and the meta-store
// keys they live under. The coordinators own the records (root coordinator:
// databases, collections, partitions; data coordinator: segments, channel
// checkpoints, indexes); other components read them through the coordinators.
//
// Every record is stored as JSON (encoding/json of the Go struct below;
// schemas are embedded as base64 protobuf bytes of schemapb.CollectionSchema).
// Key layout (all under the meta store):
//
//	rootcoord/collection/{collectionID}          CollectionInfo
//	datacoord/segment/{collectionID}/{segmentID} SegmentInfo
//	datacoord/channel-cp/{vchannel}               ChannelCheckpoint
//	datacoord/channel-epoch/{vchannel}            ChannelEpoch
//	datacoord/index/{collectionID}/{indexID}      IndexInfo
//	tso/timestamp, tso/idTimestamp                TSO windows (package tso)
//
// Field names are durable: add fields, never rename or renumber. The same
// JSON is the wire form of these records between processes (the
// coordinator's node-facing services, proto/strata/coord/v1).
//
// Channel epochs (cluster mode): each time the placement gives a vchannel
// to a data node it raises the channel's assignment epoch (package
// placement, "epoch" of placement/channel/{vchannel}); the node puts that
// epoch in every SyncReport of the channel, and the data coordinator keeps
// the highest epoch it was fenced to or saw at
// datacoord/channel-epoch/{vchannel} ({"epoch":3}). A report whose epoch
// is older is refused with StaleEpoch (Milvus's ErrChannelNotFound, code
// 500) and changes nothing. Epoch 0 is "unfenced": the standalone data
// node, which owns every vchannel, reports 0 and is never refused, and a
// channel without a stored epoch has epoch 0.
//
// Schema evolution (AddCollectionField, AlterCollectionField): the stored
// schema only grows. An added field is nullable and gets the next field ID
// after the largest in the schema; SchemaVersionTS is the timestamp of the
// last schema change. Segments written before a field was added have no
// binlogs for it, or binlogs for their later syncs only: readers fill the
// missing rows, always the first ones, with nulls or the field's default
// (storage.FieldLogs.Rows, column.Fill), so older meta and binlogs stay
// readable without rewriting them; a compaction writes the full column.
//
// Array of Structs fields: the stored schema keeps them in
// struct_array_fields as the client declared them (struct and sub-field
// IDs assigned after the other fields and `$meta`), and also lists each
// sub-field in fields as a column field named "struct[sub]" with the same
// ID (an Array or ArrayOfVector field), so every row path treats it as an
// ordinary field; describe shows the sub-fields inside their struct only.
// Schemas without struct fields are unchanged.
package catalog

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/errcode"
)

// Key prefixes in the meta store.
const (
	CollectionPrefix = "rootcoord/collection/"
	SegmentPrefix    = "datacoord/segment/"
	CheckpointPrefix = "datacoord/channel-cp/"
	// EpochPrefix holds each vchannel's assignment epoch (ChannelEpoch).
	EpochPrefix = "datacoord/channel-epoch/"
	IndexPrefix = "datacoord/index/"
)

// CollectionKey is the key of a collection record.
func CollectionKey(id int64) string { return CollectionPrefix + strconv.FormatInt(id, 10) }

// SegmentKey is the key of a segment record.
func SegmentKey(collID, segID int64) string {
	return fmt.Sprintf("%s%d/%d", SegmentPrefix, collID, segID)
}

// CheckpointKey is the key of a vchannel checkpoint.
func CheckpointKey(vchannel string) string { return CheckpointPrefix + vchannel }

// EpochKey is the key of a vchannel's assignment epoch.
func EpochKey(vchannel string) string { return EpochPrefix + vchannel }

// ChannelEpoch is the record at EpochKey: the vchannel's current
// assignment epoch (see the package documentation, "Channel epochs").
type ChannelEpoch struct {
	VChannel string `json:"vchannel"`
	Epoch    int64  `json:"epoch"`
}

// StaleEpoch is the error of a sync report refused because the channel
// has a newer owner: the report's epoch is below the channel's current
// one. It carries Milvus's ErrChannelNotFound code (500, the code Milvus's
// data coordinator answers a data node that no longer owns the channel),
// so IsStaleEpoch recognises it after an RPC hop too.
func StaleEpoch(vchannel string, epoch, current int64) error {
	return errcode.New(errcode.ChannelNotFound,
		"channel not found[channel=%s]: sync report of assignment epoch %d refused, the channel's epoch is %d (it moved to another data node)",
		vchannel, epoch, current)
}

// IsStaleEpoch reports whether err is (or wraps) a StaleEpoch refusal.
func IsStaleEpoch(err error) bool {
	return err != nil && errcode.CodeOf(err) == errcode.ChannelNotFound
}

// IndexKey is the key of an index record.
func IndexKey(collID, indexID int64) string {
	return fmt.Sprintf("%s%d/%d", IndexPrefix, collID, indexID)
}

// CollectionState is the lifecycle state of a collection.
type CollectionState int

// Collection states.
const (
	CollectionCreated CollectionState = 1
	CollectionDropped CollectionState = 2
)

// CollectionInfo is a collection's durable record.
type CollectionInfo struct {
	ID     int64  `json:"id"`
	DBName string `json:"db"`
	Name   string `json:"name"`
	Schema []byte `json:"schema"` // protobuf schemapb.CollectionSchema, with field IDs and system fields
	Shards int    `json:"shards"`
	// VChannels and PChannels are parallel: shard i lives on VChannels[i] ⊂ PChannels[i].
	VChannels []string `json:"vchannels"`
	PChannels []string `json:"pchannels"`
	// StartOffsets is parallel to VChannels: the end of each pchannel when
	// the collection was created, so every message of VChannels[i] is at an
	// offset ≥ StartOffsets[i]. A vchannel without a checkpoint is read from
	// there (Milvus keeps the same in the collection's start_positions).
	// Absent for collections created before it was recorded.
	StartOffsets     []int64           `json:"start_offsets,omitempty"`
	ConsistencyLevel int32             `json:"consistency"`
	Properties       map[string]string `json:"properties,omitempty"`
	Partitions       []PartitionInfo   `json:"partitions"`
	CreatedTS        uint64            `json:"created_ts"`
	SchemaVersionTS  uint64            `json:"schema_ts"`
	State            CollectionState   `json:"state"`
	Loaded           bool              `json:"loaded"`
	LoadedPartitions []int64           `json:"loaded_partitions,omitempty"`
}

// StartOffset returns where vchannel's messages start in its pchannel, and
// false when the collection has no such vchannel or predates start offsets.
func (c *CollectionInfo) StartOffset(vchannel string) (int64, bool) {
	for i, v := range c.VChannels {
		if v == vchannel && i < len(c.StartOffsets) {
			return c.StartOffsets[i], true
		}
	}
	return 0, false
}

// PartitionInfo is one partition of a collection.
type PartitionInfo struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	CreatedTS uint64 `json:"created_ts"`
}

// SegmentState is the segment lifecycle state (Milvus commonpb.SegmentState numbering).
type SegmentState int

// Segment states. Transitions: Growing → Sealed → Flushed → Dropped
// (Growing → Flushed when a flush seals and syncs in one step).
const (
	SegmentGrowing SegmentState = 2
	SegmentSealed  SegmentState = 3
	SegmentFlushed SegmentState = 4
	SegmentDropped SegmentState = 6
)

// String implements fmt.Stringer.
func (s SegmentState) String() string {
	switch s {
	case SegmentGrowing:
		return "Growing"
	case SegmentSealed:
		return "Sealed"
	case SegmentFlushed:
		return "Flushed"
	case SegmentDropped:
		return "Dropped"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// SegmentLevel is the compaction level of a segment.
type SegmentLevel int

// Segment levels: L0 holds only deletes; L1 is ordinary data; L2 is clustered.
const (
	LevelL0 SegmentLevel = 0
	LevelL1 SegmentLevel = 1
	LevelL2 SegmentLevel = 2
)

// Binlog describes one file in object storage.
type Binlog struct {
	LogID   int64  `json:"log_id"`
	Entries int64  `json:"entries"`
	TsFrom  uint64 `json:"ts_from"`
	TsTo    uint64 `json:"ts_to"`
	Size    int64  `json:"size"`
	MemSize int64  `json:"mem_size"`
}

// Position is a place in a pchannel: the record offset and the timestamp of
// the message there.
type Position struct {
	Offset   int64  `json:"offset"`
	TimeTick uint64 `json:"ts"`
}

// SegmentInfo is a segment's durable record.
type SegmentInfo struct {
	ID           int64        `json:"id"`
	CollectionID int64        `json:"collection"`
	PartitionID  int64        `json:"partition"`
	VChannel     string       `json:"vchannel"`
	State        SegmentState `json:"state"`
	Level        SegmentLevel `json:"level"`
	NumRows      int64        `json:"rows"`
	MaxRows      int64        `json:"max_rows"`
	// Binlogs, Statslogs: per field ID. Deltalogs: delete files.
	Binlogs   map[int64][]Binlog `json:"binlogs,omitempty"`
	Statslogs map[int64][]Binlog `json:"statslogs,omitempty"`
	Deltalogs []Binlog           `json:"deltalogs,omitempty"`
	// StartPosition is the position of the segment's first insert message.
	StartPosition *Position `json:"start_pos,omitempty"`
	// SyncedOffset is the WAL offset through which the segment's rows are in
	// object storage; replay skips inserts for this segment at or below it.
	SyncedOffset int64 `json:"synced_offset"`
	// FlushTS is the timestamp of the flush message that sealed it.
	FlushTS uint64 `json:"flush_ts,omitempty"`
	// CompactedFrom lists the segments a compaction merged into this one.
	CompactedFrom []int64 `json:"compacted_from,omitempty"`
	// Sorted says the segment's insert binlogs hold its rows as one run in
	// primary-key order (equal keys in insert order), as Milvus's sorted
	// segments do: every batch the data node writes is sorted, so a segment
	// written in one batch (a flush of a never-synced buffer, an import, a
	// compaction output) is sorted, and one synced in several batches is
	// sorted by a single-input compaction after its flush. Absent (false)
	// in records written before segments were sorted.
	Sorted bool `json:"sorted,omitempty"`
	// KeyRange is the clustering-key range of an L2 segment (nil = unknown).
	KeyRange   *KeyRange `json:"key_range,omitempty"`
	CreatedAt  int64     `json:"created_at"` // unix ms
	LastSyncAt int64     `json:"last_sync_at,omitempty"`
	DroppedAt  int64     `json:"dropped_at,omitempty"`
	// Spare marks an empty Growing segment the data coordinator made ahead
	// of need, so that assigning rows to a new segment takes no meta-store
	// round trip. Claiming it happens in memory, so a record that still says
	// Spare may have rows in the WAL (its first sync clears the mark and
	// sets its partition). Absent (false) in records of older versions.
	Spare bool `json:"spare,omitempty"`
	// ImportJob is the bulk-import job that wrote the segment (0 = none):
	// its rows never went through the WAL, and it became Flushed with the
	// job's other segments in one transaction. Absent in older records.
	ImportJob int64 `json:"import_job,omitempty"`
}

// IsSorted is whether the segment counts as sorted where Milvus reports it
// (PersistentSegmentInfo.is_sorted, the segment_is_sorted metric label): a
// flushed segment whose rows are one primary-key run (Sorted) or that has
// no rows, and any L0 segment (it holds deletes only). Growing and sealed
// segments are not sorted.
func (s SegmentInfo) IsSorted() bool {
	if s.Level == LevelL0 {
		return true
	}
	return s.State == SegmentFlushed && (s.Sorted || s.NumRows == 0)
}

// ChannelCheckpoint is a vchannel's checkpoint: every message with an offset
// below Position.Offset is in object storage (or was dropped), except inserts
// of segments still growing, which replay from their StartPosition.
// DeltaSyncedOffset is the offset through which deletes are in delta logs.
// The data coordinator never moves a stored checkpoint back (a report's
// older position or DeltaSyncedOffset leaves the stored one).
type ChannelCheckpoint struct {
	VChannel          string   `json:"vchannel"`
	Position          Position `json:"position"`
	DeltaSyncedOffset int64    `json:"delta_synced_offset"`
}

// IndexInfo is an index definition on one field.
type IndexInfo struct {
	ID           int64             `json:"id"`
	CollectionID int64             `json:"collection"`
	FieldID      int64             `json:"field"`
	Name         string            `json:"name"`
	Params       map[string]string `json:"params"` // index_type, metric_type, build params
	CreatedTS    uint64            `json:"created_ts"`
	Deleted      bool              `json:"deleted,omitempty"`
}

// IsConfigurableIndexParam reports whether key is an index property that
// AlterIndex may set or delete after creation (as in Milvus: mmap.enabled,
// and indexoffsetcache.enabled for BITMAP indexes). Such keys live in
// IndexInfo.Params but do not make two index definitions differ.
func IsConfigurableIndexParam(key string) bool {
	return key == "mmap.enabled" || key == "indexoffsetcache.enabled"
}

// Marshal encodes a record.
func Marshal(v any) ([]byte, error) { return json.Marshal(v) }

// Unmarshal decodes a record.
func Unmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// Collection is a decoded collection record: the record plus its parsed schema.
// Values handed out by the root coordinator are immutable snapshots.
type Collection struct {
	CollectionInfo
	// Schema is the stored schema, including `$meta` and the system fields.
	Schema *schemapb.CollectionSchema
}

// DecodeCollection parses a stored collection record.
func DecodeCollection(b []byte) (*Collection, error) {
	var info CollectionInfo
	if err := json.Unmarshal(b, &info); err != nil {
		return nil, fmt.Errorf("catalog: decode collection: %w", err)
	}
	s := &schemapb.CollectionSchema{}
	if err := proto.Unmarshal(info.Schema, s); err != nil {
		return nil, fmt.Errorf("catalog: decode schema of collection %d: %w", info.ID, err)
	}
	return &Collection{CollectionInfo: info, Schema: s}, nil
}

// Partition returns the partition with the given name.
func (c *Collection) Partition(name string) (PartitionInfo, bool) {
	for _, p := range c.Partitions {
		if p.Name == name {
			return p, true
		}
	}
	return PartitionInfo{}, false
}

// Field returns the schema field with the given name.
func (c *Collection) Field(name string) *schemapb.FieldSchema {
	for _, f := range c.Schema.GetFields() {
		if f.GetName() == name {
			return f
		}
	}
	return nil
}

// PKField returns the primary key field.
func (c *Collection) PKField() *schemapb.FieldSchema {
	for _, f := range c.Schema.GetFields() {
		if f.GetIsPrimaryKey() {
			return f
		}
	}
	return nil
}

// DynamicField returns the `$meta` field, or nil when the dynamic field is off.
func (c *Collection) DynamicField() *schemapb.FieldSchema {
	for _, f := range c.Schema.GetFields() {
		if f.GetIsDynamic() {
			return f
		}
	}
	return nil
}

// RecoveryInfo is what a node needs to start consuming a vchannel.
type RecoveryInfo struct {
	// Checkpoint is the vchannel's checkpoint; its VChannel is empty when
	// the vchannel has none yet (SeekOffset is then where it started).
	Checkpoint ChannelCheckpoint
	// SeekOffset is where to start reading so that every row of every
	// segment that is not yet Flushed is replayed: the minimum of the
	// checkpoint and the start positions of unflushed segments.
	SeekOffset int64
	// Segments are every live segment of the vchannel (all levels, all states).
	Segments []SegmentInfo
}

// SyncReport is what a data node reports after writing a sync to object storage.
//
// A report may arrive twice (its answer was lost and the node wrote the
// sync again, with new files): the data coordinator applies it once. A
// segment's part that adds rows or files or flushes the segment is
// already applied when its SyncedOffset is not past the segment's, and
// the L0 segment when Checkpoint.DeltaSyncedOffset is not past the
// stored checkpoint's; a data node's new syncs are always past both.
type SyncReport struct {
	VChannel string
	// Epoch is the assignment epoch under which the reporting node owns
	// the vchannel (0: unfenced, the standalone node). The data
	// coordinator refuses a report whose epoch is older than the
	// channel's (StaleEpoch).
	Epoch int64
	// Segments synced (L1 data), with the files added by this sync.
	Segments []SegmentSync
	// L0 is a new L0 segment holding the deletes of this sync, if any.
	L0 *SegmentInfo
	// Checkpoint is the vchannel's new checkpoint.
	Checkpoint ChannelCheckpoint
}

// SegmentSync is one segment's part of a sync.
type SegmentSync struct {
	SegmentID     int64
	PartitionID   int64
	CollectionID  int64
	Rows          int64
	Binlogs       map[int64][]Binlog
	Statslogs     map[int64][]Binlog
	StartPosition *Position
	// SyncedOffset is the vchannel's last message the sync covers (-1 in
	// a report of the start position only). A part that adds rows or
	// files or flushes the segment and is not past the segment's
	// SyncedOffset was applied before and is skipped.
	SyncedOffset int64
	// Flushed marks the segment Flushed (the sync answered its Flush message).
	Flushed bool
}

// IndexTaskKey is the key of an index build task.
func IndexTaskKey(buildID int64) string { return fmt.Sprintf("%s%d", IndexTaskPrefix, buildID) }

// IndexTaskPrefix is the key prefix of index build tasks.
const IndexTaskPrefix = "datacoord/index-task/"

// IndexTaskState is the state of an index build task (commonpb.IndexState numbering).
type IndexTaskState int

// Index build task states: Unissued → InProgress → Finished | Failed.
// A task whose builder dies goes back to Unissued; a failed build is retried
// up to a limit before it stays Failed.
const (
	IndexUnissued   IndexTaskState = 1
	IndexInProgress IndexTaskState = 2
	IndexFinished   IndexTaskState = 3
	IndexFailed     IndexTaskState = 4
)

// String implements fmt.Stringer.
func (s IndexTaskState) String() string {
	switch s {
	case IndexUnissued:
		return "Unissued"
	case IndexInProgress:
		return "InProgress"
	case IndexFinished:
		return "Finished"
	case IndexFailed:
		return "Failed"
	}
	return "IndexState(" + strconv.Itoa(int(s)) + ")"
}

// IndexTask builds one index over one flushed segment. Its files live at
// files/index_files/{BuildID}/{Version}/{PartitionID}/{SegmentID}/{key}.
type IndexTask struct {
	BuildID      int64          `json:"build_id"`
	IndexID      int64          `json:"index_id"`
	CollectionID int64          `json:"collection"`
	PartitionID  int64          `json:"partition"`
	SegmentID    int64          `json:"segment"`
	FieldID      int64          `json:"field"`
	Rows         int64          `json:"rows"`
	State        IndexTaskState `json:"state"`
	FailReason   string         `json:"fail_reason,omitempty"`
	// Version counts attempts; each attempt writes under its own version.
	Version int64 `json:"version"`
	// Failures counts attempts that reported a build error. An attempt
	// abandoned because its process stopped (shutdown, crash) reports
	// nothing and does not count: the task is claimed again after a restart.
	Failures int `json:"failures,omitempty"`
	// Files are the index file keys (under the object-storage root) of the finished build.
	Files     []string `json:"files,omitempty"`
	SizeBytes int64    `json:"size,omitempty"`
	// Builder names the builder holding an InProgress task (empty
	// otherwise): "standalone" for a standalone process's builder,
	// "datanode-{nodeID}@{address}" for a data node process, whose
	// membership node ID is never reused, so a restarted node holds none
	// of its previous life's claims. The coordinator role releases every
	// task of a data node whose session ends (back to Unissued with a new
	// Version), and at start every task held by a builder that is not a
	// live data node.
	Builder string `json:"builder,omitempty"`
	// LeaseUntil (unix ms) is when an InProgress task may be handed to another builder.
	LeaseUntil int64 `json:"lease_until,omitempty"`
	Deleted    bool  `json:"deleted,omitempty"`
}

// IndexProgress summarises an index's builds for DescribeIndex.
type IndexProgress struct {
	IndexedRows, TotalRows, PendingRows int64
	State                               IndexTaskState
	FailReason                          string
}

// CompactionType says what a compaction plan does.
type CompactionType int

// Compaction types.
const (
	// CompactionL0 applies the deletes of L0 segments to the L1 segments that
	// may hold the keys, as delta logs of those segments, then drops the L0 segments.
	CompactionL0 CompactionType = 1
	// CompactionMix merges flushed segments into one, physically removing
	// deleted and expired rows.
	CompactionMix CompactionType = 2
	// CompactionClustering rewrites a partition's segments into L2 segments
	// holding disjoint ranges of the clustering key, so reads can skip them.
	CompactionClustering CompactionType = 3
)

// KeyRange is the [min, max] of a segment's clustering key. Exactly one pair
// is meaningful, chosen by Kind ("int", "float" or "string").
type KeyRange struct {
	FieldID int64      `json:"field"`
	Kind    string     `json:"kind"`
	Ints    [2]int64   `json:"ints,omitempty"`
	Floats  [2]float64 `json:"floats,omitempty"`
	Strings [2]string  `json:"strings,omitempty"`
}

// Bounds returns the range as (lo, hi) of type int64, float64 or string.
func (r *KeyRange) Bounds() (any, any) {
	switch r.Kind {
	case "int":
		return r.Ints[0], r.Ints[1]
	case "float":
		return r.Floats[0], r.Floats[1]
	}
	return r.Strings[0], r.Strings[1]
}

// String implements fmt.Stringer.
func (t CompactionType) String() string {
	switch t {
	case CompactionL0:
		return "L0"
	case CompactionMix:
		return "Mix"
	case CompactionClustering:
		return "Clustering"
	}
	return "CompactionType(" + strconv.Itoa(int(t)) + ")"
}

// CompactionPlan is one unit of compaction work on one vchannel.
type CompactionPlan struct {
	ID           int64          `json:"id"`
	TriggerID    int64          `json:"trigger_id"`
	Type         CompactionType `json:"type"`
	CollectionID int64          `json:"collection"`
	PartitionID  int64          `json:"partition"`
	VChannel     string         `json:"vchannel"`
	// Inputs are the segments read: for Mix the segments merged, for L0 the L0 segments.
	Inputs []SegmentInfo `json:"inputs"`
	// Targets are, for L0, the L1 segments that receive the deletes.
	Targets []SegmentInfo `json:"targets,omitempty"`
	// Deletes are L0 segments whose deletes a Mix compaction applies (they stay).
	Deletes []SegmentInfo `json:"deletes,omitempty"`
	// TTL drops rows inserted before this timestamp (0 = none).
	ExpireBefore uint64 `json:"expire_before,omitempty"`
	// ClusteringField and MaxRows shape a Clustering compaction's outputs.
	ClusteringField int64 `json:"clustering_field,omitempty"`
	MaxRows         int64 `json:"max_rows,omitempty"`
	// Executor names the executor holding the plan's current attempt (as
	// IndexTask.Builder names a builder), set by the claim. Plans live in
	// the coordinator's memory only, so neither field outlives it: a new
	// coordinator plans again from the inputs, and a result for a plan it
	// does not know is refused.
	Executor string `json:"executor,omitempty"`
	// Attempt grows with every claim and release of the plan. A result must
	// carry the attempt it executed: one of an older attempt (its executor
	// was declared dead and the plan handed to another) is refused.
	Attempt int64 `json:"attempt,omitempty"`
}

// CompactionResult is what an executor produced for a plan.
type CompactionResult struct {
	PlanID int64
	// Attempt is the plan's CompactionPlan.Attempt the result was made
	// under; the coordinator refuses a result of an older attempt.
	Attempt int64
	// Outputs are the new segments of a Mix (at most one) or Clustering
	// compaction; empty when every row was removed.
	Outputs []SegmentInfo
	// Deltalogs are, for L0, the new delta logs per target segment.
	Deltalogs map[int64][]Binlog
}

// LogIDs returns the log IDs of a field's insert binlogs, in order.
func (s *SegmentInfo) LogIDs(fieldID int64) []int64 {
	logs := s.Binlogs[fieldID]
	out := make([]int64, len(logs))
	for i, l := range logs {
		out[i] = l.LogID
	}
	return out
}

// FieldLogRows returns the rows the segment's insert binlogs hold (those of
// the timestamp field, which every sync writes): a field added to the schema
// after the segment was written reads as that many nulls or defaults.
func (s *SegmentInfo) FieldLogRows() int64 {
	var n int64
	for _, l := range s.Binlogs[1] {
		n += l.Entries
	}
	return n
}
