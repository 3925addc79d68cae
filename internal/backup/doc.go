// Package backup takes and restores backups of collections: `strata backup
// create|list|restore`. It talks to a running server over the Milvus API
// and to two object stores through the objstore port: the server's (to
// read segment files, and to stage them for a restore) and the backup
// location's (a directory).
//
// # Consistency
//
// Create flushes the collections and takes each Flush timestamp as the
// collection's consistency point (Collection.FlushTS); it waits until the
// flush is in object storage, lists the flushed segments
// (GetPersistentSegmentInfo) and copies their insert, delta and stats logs.
// The server keeps serving writes meanwhile: a segment flushed after the
// Flush may hold later rows, and deletes after it may sit in delta logs, so
// Restore imports with end_ts = FlushTS and the importer leaves out every
// row and delete past it. A segment whose row-ID binlogs do not hold the
// rows the server reports (compacted and removed while copying) fails the
// backup rather than silently losing or duplicating rows.
//
// # Layout and manifest (format version 1)
//
//	{location}/{name}/manifest.json                         the Manifest, written last
//	{location}/{name}/binlogs/insert_log/{coll}/{part}/{seg}/{field}/{log}
//	{location}/{name}/binlogs/delta_log/{coll}/{part}/{seg}/{log}
//	{location}/{name}/binlogs/stats_log/{coll}/{part}/{seg}/{field}/{log}
//
// The files are the server's objects byte for byte (Milvus storage v1
// binlogs; docs/format/binlog.md), keyed as on the server without its root
// path, with IDs as they were at backup time. manifest.json is JSON:
//
//	version      1
//	name         the backup's name (its directory)
//	create_time  RFC 3339, UTC
//	server       the API address it was taken from
//	db           the database
//	collections  per collection: name, id, flush_ts (hybrid timestamp),
//	             schema (protobuf JSON of schemapb.CollectionSchema, field IDs
//	             included), shards_num, num_partitions, consistency_level,
//	             properties, partitions [{name, id}], indexes [{field, name,
//	             params}], segments [{id, partition_id, level ("L0", "L1",
//	             "L2"), num_rows, files [{key, size, sha256}]}], rows
//	rbac         BackupRBAC's RBACMeta as protobuf JSON (absent when
//	             authorization is off)
//
// A directory without manifest.json is a backup that did not finish; List
// leaves it out. Readers refuse another version.
//
// # Restore
//
// Restore refuses a target collection that exists, then copies the chosen
// collections' files into the server's object store under
// backup-restore/{name}/{nanos}/ (StagingPrefix), checking each file's size
// and SHA-256, so that a missing or damaged file fails before anything is
// created. It creates each collection (a new name allowed) with the
// backed-up schema, checks that the field IDs came out the same (binlogs
// map to fields by ID), creates the partitions, and imports each L1/L2
// segment with Milvus's backup import (Import with backup=true, files
// [insert-log prefix, delta-log prefix, the L0 delta-log prefixes of its
// partition and of all partitions], end_ts = flush_ts); it waits for the
// jobs and recreates the indexes. A failure drops every collection the
// restore created. The staged files are deleted when it ends.
package backup
