// Package highlight builds the fragments of Milvus's LexicalHighlighter:
// for one text, the pieces around the tokens that match a set of terms,
// with each match wrapped in a pre and a post tag.
//
// # Semantics (Milvus 2.6)
//
// A token of the text matches when its analyzed form is one of the terms
// (the analyzed BM25 search text of the hit's query, and the analyzed texts
// of the TextMatch highlight queries). The byte ranges of the matching
// tokens are sorted; a range that touches or overlaps the previous one is
// merged into it (so adjacent CJK words give one highlight), and one wholly
// inside the previous one is dropped. Offsets are then counted in characters
// (runes), as every fragment parameter is.
//
// Fragments are cut greedily from the first match: a fragment starts
// fragment_offset characters before its first match (not before the start
// of the text) and ends fragment_size characters after its start, or at the
// end of its first match if that is later, or at the end of the text if that
// is sooner. A following match that starts at or before the fragment's end
// joins it and extends the end to its own end; the next match after the end
// starts a new fragment. At most num_of_fragments fragments are kept (0 keeps
// none). Fragments may overlap when fragment_offset reaches back into the
// previous one; only the matches of a fragment are tagged in it.
//
// Tags cycle per match within a fragment: the i-th match of a fragment gets
// pre_tags[i % len(pre_tags)] and post_tags[i % len(post_tags)], so the two
// lists may have different lengths.
//
// Parse reads the highlighter parameters as pymilvus sends them (JSON lists
// for the tags and queries, decimal integers, a bool) and refuses bad values
// with Milvus's messages (code 1100).
package highlight
