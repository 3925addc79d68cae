// Package sparse implements sparse float vectors (Milvus SparseFloatVector)
// and their indexes, SPARSE_INVERTED_INDEX and SPARSE_WAND, under the inner
// product metric (IP) and BM25.
//
// # Vectors
//
// A sparse row on the wire and in binlogs is n pairs of a little-endian
// uint32 dimension index and a little-endian float32 value, 8 bytes a pair.
// Validate applies the Milvus rules: indices strictly ascending and below
// 2^32-1, values finite and not negative; an empty row is valid. Dot adds
// the products in ascending index order in float32, and every search path
// (exact, inverted, WAND) does the same, so their scores are bit-identical.
// A row is a hit only when its score is positive: rows sharing no
// dimension with the query are never returned.
//
// # Index
//
// Build transposes the rows into one posting list per dimension (rows
// ascending, with their values and the largest absolute value of the list)
// and keeps the rows themselves. drop_ratio_build in [0, 1) leaves the
// smallest fraction of all values (by absolute value) out of the lists;
// drop_ratio_search in [0, 1) does the same to the query's values. When
// anything was dropped a search gathers k×refine_factor candidates
// (default 10) and rescores them exactly with the full rows.
//
// SPARSE_INVERTED_INDEX accumulates scores term at a time over every
// posting of the query's dimensions. SPARSE_WAND walks the rows in windows
// of 16,384 consecutive rows with a small accumulator, using block maxima
// (the largest absolute value of every 64 postings of a list, derived on
// Build and Unmarshal, not stored) for upper bounds: a window whose bounds cannot beat the
// current k-th best is skipped; a window where the weakest lists (by
// bound) hold most of the postings is searched MaxScore style, those lists
// only probed for rows the other lists make promising; any other window is
// accumulated exactly, term at a time (in ascending dimension order). Rows
// that survive are rescored exactly at the end. Queries whose lists hold
// under one posting per four rows use the term-at-a-time search, which is
// faster there. With nothing dropped both return exactly the top-k of an exact search
// (ties by ascending row).
//
// # BM25
//
// A BM25 function's output rows hold term frequencies (dimension = token
// hash). The index is built the same way (the metric is not part of the
// file); SearchBM25 scores its rows by BM25 with parameters k1, b and the
// collection's average row length, which the caller derives from Stats
// (documents, total length and document frequencies among the allowed
// rows, summed over segments) so that scores use collection statistics,
// not a segment's. Term contributions are computed in float64 and added as
// 2⁻³² fixed-point integers, so the exact scan (ScoreRow) and the index
// give bit-identical scores whatever order they add terms in. The search
// takes terms by descending upper bound (the contribution bound given the
// list's largest frequency, since a row's length is at least that
// frequency) and, once k rows score above what the terms left could add,
// only probes those rows in the remaining lists (MaxScore); the result is
// exact. Row lengths are derived from the forward rows on first use, not
// stored.
//
// # File format (version 1)
//
// Everything is little-endian. The magic, version (the magic's last digit)
// and CRC are the envelope of package indexfile. The file is the index type's file key in the
// index build directory (SPARSE_INVERTED_INDEX or SPARSE_WAND).
//
//	header:
//	  magic          [8]byte  "STRSPRS1"
//	  kind           uint32   0 = SPARSE_INVERTED_INDEX, 1 = SPARSE_WAND
//	  dropRatioBuild float32
//	  dropped        uint32   1 if the lists leave out some values
//	  rows           uint32   R
//	  nnz            uint64   N, values in all rows
//	  lists          uint32   L, posting lists
//	  reserved       uint32   0
//	  postings       uint64   P, entries in all lists
//	rowOff   [R+1]uint64    row r is entries rowOff[r]..rowOff[r+1]
//	fwdIdx   [N]uint32      dimension indices of the rows, ascending per row
//	fwdVal   [N]float32     their values
//	dims     [L]uint32      dimension of each list, ascending
//	listOff  [L+1]uint64    list l is entries listOff[l]..listOff[l+1]
//	maxAbs   [L]float32     largest absolute value of each list
//	postRow  [P]uint32      rows of the lists, ascending per list
//	postVal  [P]float32     their values
//	crc      uint32         CRC-32C (Castagnoli) of everything before it
//
// Unmarshal verifies the checksum, the section sizes against the file
// length, and every offset, order, bound and upper bound.
package sparse
