// Package scalar implements the scalar indexes Milvus defines (INVERTED,
// STL_SORT, BITMAP and Trie) for one field of one sealed segment, and the
// durable format they are stored in.
//
// Every kind shares one structure: the field's distinct non-null values in
// ascending order (the dictionary) and, for each value, the ascending list
// of rows holding it (its posting list). Null rows and NaN floats appear in
// no posting list. For an Array field the dictionary holds the distinct
// elements and a row is posted once under every element it contains. This
// answers equality, in-lists, ranges and string prefixes by binary search
// over the dictionary and one pass over a contiguous run of postings. The
// kind is recorded so the query node can report it; which predicates each
// kind may serve and which field types it accepts follow Milvus (see Check).
//
// Bool values are keyed as the integers 0 (false) and 1 (true).
//
// # File format (version 1)
//
// All integers are little-endian. The magic, version and CRC are the
// envelope of package indexfile. A file is:
//
//	magic    [4]byte  "STSX"
//	version  uint16   1
//	kind     uint8    1 INVERTED, 2 STL_SORT, 3 BITMAP, 4 Trie
//	keyType  uint8    1 int64, 2 float64, 3 string
//	flags    uint8    bit 0: the field is an Array (keys are elements)
//	rows     uint32   rows in the segment
//	nkeys    uint32   distinct keys
//	keys     nkeys × int64 | nkeys × float64 (IEEE-754 bits) |
//	         nkeys × (uvarint length, bytes)            strictly ascending
//	offsets  (nkeys+1) × uint32: postings of key i are postings[offsets[i]:offsets[i+1]]
//	postings offsets[nkeys] × uint32 row numbers, ascending within a key
//	crc      uint32   CRC-32C (Castagnoli) of every preceding byte
//
// Unmarshal checks the magic, version, kind, key order, offsets, row bounds
// and checksum, and returns an error (never panics) on any mismatch.
package scalar
