// Package mmapcache keeps local copies of object-storage files and maps
// them read-only into memory, so that a query node can serve index files
// (and the arrays inside them) from the page cache instead of the Go heap:
// the kernel pages them in as they are read and may drop them again under
// memory pressure, which lets a node load more than its RAM.
//
// # It is a cache
//
// Object storage is the only durable copy. A cache file may be missing,
// stale, truncated or damaged at any time (a crash while writing, a full
// disk, an operator deleting the directory): Map writes a missing or
// malformed one again through its Filler (a copy of an object,
// FromObject, or data derived from object storage, such as a decoded
// column), and the reader of a mapping
// checks its content as it would check a download (index files carry a
// CRC-32C and decoders check their structures, see indexfile's "Mapped
// reads"); when that check fails, Rebuild replaces the file with a fresh
// copy and logs a warning that names it. Files are never changed in place:
// a new copy is written to a temporary file and renamed over the old one,
// so a mapping made earlier keeps reading the old copy until it is closed.
// Nothing is fsynced: a copy that a power loss leaves incomplete is caught
// by the same checks.
//
// # Layout
//
// The cache file with key K lives at {dir}/K (dir is the query node's mmap
// directory, {data-dir}/cache/mmap by default). The query node keys an
// index file's copy by the object's key (files/index_files/…) and a
// column file by columns/{collection}/{partition}/{segment}/{field}. Temporary files
// are {dir}/K.tmp-*; Open removes any left by a crash. A cache file is:
//
//	offset    size  field
//	0         8     magic "STRMMAP\x00"
//	8         4     version (1), little-endian
//	12        4     pad p (0 … 63), little-endian
//	16        8     n, the object's length in bytes, little-endian
//	24        4     CRC-32C (Castagnoli) of bytes 0 … 23
//	28        …     zero up to 4096
//	4096 + p  n     the content: the object's bytes, verbatim
//
// and is exactly 4096 + p + n bytes long. The object starts on a page
// boundary plus p: a reader that needs the arrays inside it aligned in
// memory (32-bit words on a multiple of 4) asks Rebuild for a shift, and
// the new copy's pad is chosen so that they are; later maps find it
// aligned. A file whose header, pad or length disagrees is rewritten.
//
// # Collection
//
// The cache does not know what its files belong to; its owner does.
// Collect walks the directory and removes every file whose key the
// owner's keep function refuses, then the directories left empty (never
// dir itself); each removal holds the key's lock, so it never races a Map
// or Rebuild of the same key, and temporary files are left to their
// writers. The query node keeps a file while the catalog still has its
// owner (a column file's segment, an index file's finished build) and
// runs Collect at start, after every drop and periodically, so the files
// of dropped collections, partitions and indexes do not pile up. A file
// may be removed while mapped: unlinking does not disturb a mapping, and
// the kernel frees the blocks once the last mapping is closed, so the
// space of a file a reader still holds comes back when that reader lets
// go.
//
// # Lifetime
//
// A Mapping stays valid until Close, which unmaps it: every slice of its
// Data must be dropped before then (the query node closes a segment's
// mappings when the last reader of the segment releases it). Reading a
// mapping whose file was truncated underneath it by another process raises
// SIGBUS; Strata never truncates a cache file it has mapped.
//
// # Files read by position
//
// OpenFile gives a cache file's content as a File read with pread
// instead of a mapping, for an index that keeps most of its file on disk
// and reads a few records a search (DISKANN): the pages it reads are page
// cache, not the process's resident memory. OpenFile writes a missing or
// malformed copy as Map does and RefillFile replaces a damaged one as
// Rebuild does (always with pad 0: a File has no alignment to keep). A
// File stays valid until Close; like a mapping, it keeps reading the copy
// it opened when that copy is replaced or removed.
package mmapcache
