// Package textindex is the positional inverted index behind the
// text_match and phrase_match filters: for one VarChar field of one
// segment, every analyzed token maps to the rows holding it, and for each
// such row to the token's positions.
//
// # Layout
//
// A term's posting keeps three flat slices rather than per-row maps:
// rows (ascending row numbers of the segment), offs (where each row's
// positions start in pos) and pos (token positions, ascending within a
// row). A (term, row) pair costs 8 bytes plus 4 per occurrence.
//
// # Lifecycle
//
// An Index is built lazily, on the first filter that needs it, and kept
// with the segment (see expr.MemoBatch); it is never written to disk, so
// loading or restarting costs nothing and older data needs no migration.
// Segments only ever gain rows at the end (deletes are visibility marks),
// so Sync extends the index to a growing segment's new rows incrementally
// and a reader that sees n rows ignores any row at or past n.
//
// # Semantics
//
// MatchAny marks rows holding at least min of the given distinct terms
// (text_match, with minimum_should_match = min). MatchPhrase marks rows
// where the query's tokens occur with their relative positions shifted by
// at most slop: there is one occurrence of each query token such that, with
// every occurrence moved back by its token's position in the query, the
// largest and smallest moved positions differ by at most slop. Slop 0 is
// the exact phrase; a larger slop admits gaps and reordering, as Milvus's
// (tantivy's) sloppy phrase query does.
//
// An Index is safe for concurrent use.
package textindex
