// Package analyzer turns text into tokens, as Milvus's analyzers do for
// VarChar fields with enable_analyzer: a tokenizer splits the text, then
// filters (lowercase, stop words, stemmers, ...) rewrite or drop tokens.
// BM25 functions hash the tokens into sparse vectors (Hash), text_match and
// phrase_match index them with their positions, and run_analyzer shows them.
//
// # Contract
//
// New builds an Analyzer from analyzer_params (the JSON object Milvus takes:
// {"type": "standard"}, {"tokenizer": ..., "filter": [...]}); "" or "{}"
// is the standard analyzer. An Analyzer is immutable and safe for
// concurrent use. ForField builds the analyzer of a schema field, single or
// multi-language (multi_analyzer_params, chosen per row by another field).
//
// Tokens are numbered by Position (0, 1, 2, ... in the order the tokenizer
// produced them, before filters drop any, so a dropped stop word leaves a
// gap as in tantivy) and carry their byte offsets in the input.
package analyzer
