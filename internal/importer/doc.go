// Package importer is bulk import: it reads the files pymilvus's
// LocalBulkWriter and RemoteBulkWriter write and turns them into flushed
// segments, without sending a row through the WAL.
//
// # Requests and files
//
// A job holds tasks, one per file group: one JSON file (row-based,
// {"rows": [...]} or a plain list of row objects), one JSON Lines file
// (.jsonl or .ndjson, one row object per line), one Parquet file (one
// column per field, named after it) or the NumPy files of one batch (one
// FIELD.npy per field, format versions 1-3, C order, 1-D for scalars and
// 2-D for vectors). The dynamic field is the "$meta" key, column or file (a
// JSON object); keys of a JSON row that are not fields go into it too. An
// Array of Structs field is a list of objects (JSON) or of structs
// (Parquet), one key per sub-field; the proxy splits it as for an insert.
// Vectors are lists of numbers (JSON), lists (Parquet), or 2-D arrays
// (NumPy); half-precision vectors are their little-endian bytes in Parquet
// and NumPy (as BulkWriter keeps them) and numbers in JSON; sparse vectors
// are JSON objects ({"index": value} or {"indices": [...], "values": [...]}),
// as text in Parquet. A missing or null value is null for a nullable field,
// the default for one with a default, an error otherwise; an auto-ID key is
// generated unless the collection allows inserting it.
//
// Paths are object-store keys from the store's root (the bucket's root for
// S3; {dataDir}/storage for the embedded store), or, with
// Config.AllowLocalPaths, absolute paths on the server's file system.
//
// # Backup import
//
// With the option backup=true (Milvus's backup import, which milvus-backup
// restores through) each task names one segment's binlogs instead of
// files: its insert-log prefix ({prefix}/{fieldID}/{logID} below it, the
// tail of an insert_log key), then delta-log prefixes (Milvus takes one;
// more are read the same way, so a restore can add L0 segments' deletes).
// An insert-log prefix with {segmentID}/{fieldID}/{logID} below it (how
// Milvus takes it, and milvus-backup sends it) names every segment below
// it: each is read with {deltaPrefix}/{segmentID} of the first delta-log
// prefix (backupGroups).
// Fields map by field ID (the collection is created with the backed-up
// schema), binlogs by their order per field (one per sync; a field added
// after some syncs reads as its fill for the earlier ones). A row is kept
// when its timestamp is in [start_ts, end_ts] and no delete in that range
// with a later timestamp names its key (an upsert's row survives its own
// delete). The options take Milvus's physical milliseconds, or a hybrid
// timestamp as is when the value is at least 2^46, so a restore cuts
// exactly at a backup's flush timestamp. Keys are kept, auto-ID or not;
// rows get new row IDs, keep their binlogs' timestamps (as Milvus's binlog
// import keeps them), and are routed (by partition key, and primary-key
// hash) as inserts are.
//
// With the option l0_import=true (Milvus's L0 import, which milvus-backup
// restores L0 segments with) each task names delta-log prefixes; each key
// deleted in [start_ts, end_ts], with its latest delete's timestamp, is
// routed as a Delete routes it (Rows.RouteKeys) and written as one L0
// segment per vchannel (SegmentWriter.WriteImportDeletes), committed with
// the job like its other segments. Keeping the deletes' timestamps, they
// remove only rows older than them: an upsert's new row, which shares its
// delete's timestamp, stays.
//
// # Running a job
//
// Jobs run one at a time, in submission order (Manager.Run). A job
// allocates one timestamp for all of its rows, reads each task in batches of
// Config.BatchRows rows, has the proxy check and route each batch exactly as
// an Insert (Rows), and accumulates the rows per partition and vchannel;
// whenever one reaches Config.SegmentBytes, and at the end, the data node
// writes it as a new flushed segment's binlogs and stats (SegmentWriter).
// Nothing records those segments until the data coordinator commits them all
// with the job's Completed record in one meta-store transaction
// (Committer.CommitImport), so the job's rows become visible together; the
// job reports Completed once the query nodes serve them (Serving). Indexes
// are then built as for any flushed segment. A file that cannot be read, or
// a bad value (the reason names the file, the row in it and the field),
// fails the job: the segments it wrote are deleted, nothing is visible.
// While a job runs, garbage collection leaves files with IDs above its
// marker alone (Committer.BeginImport).
//
// # Durable format
//
// Each job is one meta-store record, key "import/jobs/{id}" (JobKey), value
// the JSON encoding of Job: id, db, collection_id, collection_name,
// partition, options, state ("Pending", "Importing", "Completed",
// "Failed"), reason, progress (0-100), tasks (files, file_size, state,
// reason, progress, total_rows, imported_rows, complete_time), total_rows,
// imported_rows, segments (the committed segment IDs), create_time and
// complete_time (RFC 3339) and timeout (nanoseconds). Unknown fields are
// ignored when reading, and absent ones are zero, so later versions may add
// fields. Segments committed by a job carry its ID in the segment record
// (catalog.SegmentInfo.ImportJob, "import_job"). A job that was Pending or
// Importing when the server stopped is run again from the start when it
// starts: what the interrupted run wrote was never committed, and garbage
// collection removes it after the orphan retention.
package importer
