package storage

import (
	"fmt"
	"path"
	"strconv"
	"strings"
)

// KeyKind is the kind of an object key under the root path.
type KeyKind int

// Object-key kinds, one per top-level directory under the root path.
const (
	// KindInsertLog is an insert binlog (insert_log/).
	KindInsertLog KeyKind = iota + 1
	// KindStatsLog is a stats log, per-sync or compound (stats_log/).
	KindStatsLog
	// KindDeltaLog is a delta log (delta_log/).
	KindDeltaLog
	// KindIndexFile is an index file (index_files/).
	KindIndexFile
)

// KeyKinds lists every kind, in a fixed order.
var KeyKinds = [...]KeyKind{KindInsertLog, KindStatsLog, KindDeltaLog, KindIndexFile}

// String implements fmt.Stringer; it is the kind's directory name.
func (k KeyKind) String() string {
	switch k {
	case KindInsertLog:
		return insertLogDir
	case KindStatsLog:
		return statsLogDir
	case KindDeltaLog:
		return deltaLogDir
	case KindIndexFile:
		return indexDir
	}
	return "KeyKind(" + strconv.Itoa(int(k)) + ")"
}

// KindPrefix is the List prefix of every key of a kind: "{root}/{kind}/".
// An empty root means DefaultRootPath.
func KindPrefix(root string, k KeyKind) string {
	if root == "" {
		root = DefaultRootPath
	}
	return path.Join(root, k.String()) + "/"
}

// ObjectKey is an object key parsed back into its IDs. Which fields are set
// depends on Kind:
//
//	KindInsertLog, KindStatsLog: CollectionID PartitionID SegmentID FieldID LogID
//	KindDeltaLog:                CollectionID PartitionID SegmentID LogID
//	KindIndexFile:               BuildID Version PartitionID SegmentID Name
type ObjectKey struct {
	Kind         KeyKind
	CollectionID int64
	PartitionID  int64
	SegmentID    int64
	FieldID      int64
	LogID        int64
	BuildID      int64
	Version      int64
	// Name is an index file's name below its segment directory (may contain "/").
	Name string
}

// Key rebuilds the object key under root with the key builders of this
// package (InsertLogKey, StatsLogKey, DeltaLogKey, IndexFileKey).
func (k ObjectKey) Key(root string) string {
	switch k.Kind {
	case KindInsertLog:
		return InsertLogKey(root, k.CollectionID, k.PartitionID, k.SegmentID, k.FieldID, k.LogID)
	case KindStatsLog:
		return StatsLogKey(root, k.CollectionID, k.PartitionID, k.SegmentID, k.FieldID, k.LogID)
	case KindDeltaLog:
		return DeltaLogKey(root, k.CollectionID, k.PartitionID, k.SegmentID, k.LogID)
	case KindIndexFile:
		return IndexFileKey(root, k.BuildID, k.Version, k.PartitionID, k.SegmentID, k.Name)
	}
	return ""
}

// ParseObjectKey parses a key built by InsertLogKey, StatsLogKey,
// CompoundStatsLogKey, DeltaLogKey or IndexFileKey under root (empty =
// DefaultRootPath). It accepts only the canonical form, the one the builders
// produce: a key with a different shape, a non-decimal ID, a leading zero or
// sign, or extra path segments is an error. Callers that delete objects
// should leave such keys alone.
func ParseObjectKey(root, key string) (ObjectKey, error) {
	for _, kind := range KeyKinds {
		prefix := KindPrefix(root, kind)
		rest, ok := strings.CutPrefix(key, prefix)
		if !ok {
			continue
		}
		k, err := parseRest(kind, rest)
		if err != nil {
			return ObjectKey{}, fmt.Errorf("storage: object key %q: %w", key, err)
		}
		if k.Key(root) != key {
			return ObjectKey{}, fmt.Errorf("storage: object key %q is not in canonical form", key)
		}
		return k, nil
	}
	return ObjectKey{}, fmt.Errorf("storage: object key %q is not under a known prefix of root %q", key, root)
}

func parseRest(kind KeyKind, rest string) (ObjectKey, error) {
	parts := strings.Split(rest, "/")
	ids := func(n int) ([]int64, error) {
		out := make([]int64, n)
		for i := range out {
			v, err := strconv.ParseInt(parts[i], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("segment %d (%q) is not an ID", i+1, parts[i])
			}
			out[i] = v
		}
		return out, nil
	}
	k := ObjectKey{Kind: kind}
	switch kind {
	case KindInsertLog, KindStatsLog:
		if len(parts) != 5 {
			return k, fmt.Errorf("want 5 IDs after %s/, got %d segments", kind, len(parts))
		}
		v, err := ids(5)
		if err != nil {
			return k, err
		}
		k.CollectionID, k.PartitionID, k.SegmentID, k.FieldID, k.LogID = v[0], v[1], v[2], v[3], v[4]
	case KindDeltaLog:
		if len(parts) != 4 {
			return k, fmt.Errorf("want 4 IDs after %s/, got %d segments", kind, len(parts))
		}
		v, err := ids(4)
		if err != nil {
			return k, err
		}
		k.CollectionID, k.PartitionID, k.SegmentID, k.LogID = v[0], v[1], v[2], v[3]
	case KindIndexFile:
		if len(parts) < 5 {
			return k, fmt.Errorf("want 4 IDs and a name after %s/, got %d segments", kind, len(parts))
		}
		v, err := ids(4)
		if err != nil {
			return k, err
		}
		k.BuildID, k.Version, k.PartitionID, k.SegmentID = v[0], v[1], v[2], v[3]
		k.Name = strings.Join(parts[4:], "/")
	}
	return k, nil
}
