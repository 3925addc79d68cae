// Package registry is the one table of Strata's index types. Each entry
// (a Type) says which field data types the index type serves, which
// metrics it scores with, how its build parameters are checked (with
// Milvus's wording), how it is built from a segment's column, the file key
// its index file is written under and how that file is loaded back.
//
// The proxy validates CreateIndex through Type.ParseParams, the data node
// builds through Type.Build and the query node (and fsck) load through
// ByFileKey and Type.Load, so the build parameters are parsed by the same
// code at CreateIndex time and at build time, and adding an index type is
// a change to this package alone.
//
// # Durable file keys
//
// A built index is one object, {root}/index_files/{buildID}/{version}/
// {part}/{seg}/{key} (storage.IndexFileKey), whose last path element, the
// file key, names the decoder. File keys are durable: a key once written
// must keep loading. They are the names of the types built: HNSW (also what
// AUTOINDEX builds on dense vectors; see HNSWFileKey), HNSW_SQ, HNSW_PQ
// (hnsw's quantized format), IVF_RABITQ, IVF_FLAT, IVF_SQ8,
// IVF_PQ, DISKANN, BIN_IVF_FLAT, SPARSE_INVERTED_INDEX, SPARSE_WAND,
// INVERTED, STL_SORT, BITMAP, Trie and RTREE. docs/format/binlog.md lists
// them with their formats (DISKANN's is in internal/index/diskann/doc.go).
//
// # Indexes kept on disk
//
// A type with LoadFile (DISKANN) keeps most of its file on local disk:
// the query node loads it from the file's local cache copy through
// LoadFile (OnDisk), and the index reads parts of the file by position
// while it lives. Load still decodes such a file from a stream, holding it
// all in memory.
//
// # Aliases
//
// AUTOINDEX is recorded as the user gave it and resolved at build time by
// the field's data type (Auto): HNSW for dense vectors, BIN_IVF_FLAT for
// binary vectors, SPARSE_INVERTED_INDEX for sparse vectors, RTREE for
// geometries, STL_SORT for Timestamptz and INVERTED for other scalars.
package registry
