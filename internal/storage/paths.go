package storage

import (
	"path"
	"strconv"
)

// DefaultRootPath is Milvus' default object-storage root (minio.rootPath).
const DefaultRootPath = "files"

// CompoundStatsLogID is the log ID of the merged ("compound") stats log written at flush.
const CompoundStatsLogID int64 = 1

// Object-key kinds under the root path.
const (
	insertLogDir = "insert_log"
	statsLogDir  = "stats_log"
	deltaLogDir  = "delta_log"
	indexDir     = "index_files"
)

func joinIDs(root, kind string, ids ...int64) string {
	if root == "" {
		root = DefaultRootPath
	}
	parts := make([]string, 0, len(ids)+2)
	parts = append(parts, root, kind)
	for _, id := range ids {
		parts = append(parts, strconv.FormatInt(id, 10))
	}
	return path.Join(parts...)
}

// InsertLogKey is the object key of an insert binlog:
// {root}/insert_log/{coll}/{part}/{seg}/{field}/{logID}. An empty root means DefaultRootPath.
func InsertLogKey(root string, coll, part, seg, field, logID int64) string {
	return joinIDs(root, insertLogDir, coll, part, seg, field, logID)
}

// StatsLogKey is the object key of a per-sync primary-key stats log:
// {root}/stats_log/{coll}/{part}/{seg}/{pkField}/{logID}.
func StatsLogKey(root string, coll, part, seg, pkField, logID int64) string {
	return joinIDs(root, statsLogDir, coll, part, seg, pkField, logID)
}

// CompoundStatsLogKey is the object key of the merged stats log written at
// flush: {root}/stats_log/{coll}/{part}/{seg}/{pkField}/1.
func CompoundStatsLogKey(root string, coll, part, seg, pkField int64) string {
	return StatsLogKey(root, coll, part, seg, pkField, CompoundStatsLogID)
}

// DeltaLogKey is the object key of a delta log (no field level):
// {root}/delta_log/{coll}/{part}/{seg}/{logID}.
func DeltaLogKey(root string, coll, part, seg, logID int64) string {
	return joinIDs(root, deltaLogDir, coll, part, seg, logID)
}

// IndexFileKey is the object key of an index file:
// {root}/index_files/{buildID}/{version}/{part}/{seg}/{key}.
func IndexFileKey(root string, buildID, version, part, seg int64, key string) string {
	return path.Join(joinIDs(root, indexDir, buildID, version, part, seg), key)
}
