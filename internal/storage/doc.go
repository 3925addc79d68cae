// Package storage encodes and decodes the files Strata keeps in object
// storage, byte-compatible with Milvus storage v1: insert binlogs, delta logs,
// primary-key stats logs, and their object keys. The reference is
// shared/reference/milvus-binlog-format.md; docs/format/binlog.md describes
// exactly what this package writes.
//
// # Object keys
//
//	{root}/insert_log/{coll}/{part}/{seg}/{field}/{logID}   InsertLogKey
//	{root}/stats_log/{coll}/{part}/{seg}/{pkField}/{logID}  StatsLogKey
//	{root}/stats_log/{coll}/{part}/{seg}/{pkField}/1        CompoundStatsLogKey
//	{root}/delta_log/{coll}/{part}/{seg}/{logID}            DeltaLogKey
//	{root}/index_files/{build}/{ver}/{part}/{seg}/{key}     IndexFileKey
//
// The root defaults to "files". Every ID is a decimal int64. Meta records
// store log IDs, not paths, so this scheme is load-bearing.
//
// # Binlog framing
//
// All integers are little-endian, fields packed:
//
//	0       int32  magic 0x00FFFABC (BC FA FF 00)
//	4       17 B   descriptor event header: ts u64, type i8 (0), length i32, next i32
//	21      52 B   collection, partition, segment, field i64; start, end ts u64; payload type i32
//	73      8 B    post-header lengths [52,16,16,16,16,16,16,16]
//	81      int32  extras length n
//	85      n B    extras JSON (sorted keys, compact; original_size is a decimal string)
//	85+n    ...    data events: 17 B header, start/end ts u64, payload (one Parquet file)
//
// The descriptor's length is 17+52+8+4+n and its next position 4+length.
// A data event's length is 33+len(payload).
//
// # Writer families
//
// EncodeInsertLog writes what the Milvus flush path (InsertCodec) writes:
// descriptor and event timestamps are the min/max row timestamps, event next
// position is absolute, the Parquet column is "val", REQUIRED unless the
// field is nullable, ZSTD level 3, dictionary off only for the primary key,
// one row group, extras {"nullable":bool,"original_size":"N"} where N is
// MemorySize of the column.
//
// EncodeDeltaLog writes what the Milvus 2.5+ flush path
// (DeltalogStreamWriter) writes: descriptor timestamps 0/0, field −1,
// payload type String, event type Delete with timestamps 1/1 and next
// position −1, column "0" OPTIONAL, ZSTD level 3, one JSON record per row
// {"pk":…,"ts":…,"pkType":5|21}, rows fed in 1024-row batches; original_size
// is the sum over batches of the Arrow string array's buffer sizes (validity
// bitmap + offsets + bytes), 77 for the two-row fixture of the reference.
//
// DecodeBinlog and DecodeDeltaLog read both families (and the legacy
// "pk,ts" and MULTI_FIELD delta formats): column 0 whatever its name,
// nullability from extras "nullable" or from nulls present, vector dim from
// the fixed-size width, events concatenated. Encrypted files (extras "edek")
// are refused with ErrEncrypted.
//
// ArrayOfVector columns (the vector sub-fields of an Array of Structs
// field, stored as fields "struct[sub]" of their own) are Strata's own
// payload: payload type 106, a Binary column whose rows are protobuf
// schemapb.VectorField {dim, float_vector}, one embedding list each, the
// dim read from the rows (docs/format/binlog.md).
//
// # Stats logs
//
// Stats logs are JSON, not binlog-framed: one PKStats object per sync, and a
// JSON array of them in the compound file "1" written at flush. Keys appear in
// the order fieldID, max, min, bfType, bf, pkType, maxPk, minPk; the filter is
// a BasicBF (bits-and-blooms/bloom/v3, FPR 0.001), whose JSON is
// {"m":bits,"k":hashes,"b":base64url([u64 BE length][u64 BE words])}.
// Int64 keys are hashed as 8 little-endian bytes, VarChar keys as their bytes.
package storage
