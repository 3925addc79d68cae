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
// Params Milvus refuses are errcode.Invalid errors naming the key, worded as
// Milvus words them where its tests look at the words.
//
// Tokens carry their byte offsets in the input, a Position and a Length
// (Milvus's position_length). Position is the token's ordinal in the
// tokenizer's output for the standard and whitespace tokenizers (0, 1, 2,
// ... before filters drop any, so a dropped stop word leaves a gap, as in
// tantivy), and the rune offset of the token's start for jieba and icu, as
// Milvus reports them; filters never change a token's position.
//
// # What is built in
//
// Analyzers ("type"): standard (standard tokenizer, lowercase), english
// (standard, lowercase, English Snowball stemmer, then the _english_ stop
// words, matched against stems as in Milvus), chinese (jieba, cnalphanumonly);
// each takes extra "stop_words".
//
// Tokenizers: standard (runs of letters and digits, tantivy's
// SimpleTokenizer; with "uax29": true, UAX #29 word segments cut at
// "max_token_length" runes), whitespace (ASCII whitespace), jieba (jieba-rs's
// algorithm with its dictionary and HMM model, data/jieba_*.gz, loaded once on
// first use and shared; "dict", "mode", "hmm"), icu (every UAX #29 word
// segment; unlike ICU, no dictionary for Chinese, Japanese or Thai words).
// lindera is refused: its dictionaries are not part of Strata.
//
// Filters: lowercase, asciifolding, alphanumonly, cnalphanumonly, cncharonly,
// removepunct (by name), and length ("max"), stop ("stop_words", with the
// lists of data/stop_words.txt by name: _english_, _danish_, ...), stemmer
// ("language", Snowball), decompounder ("word_list"), regex ("expr", RE2
// syntax: Milvus's look-around is refused as an invalid expression) and
// synonym ("synonyms", "expand") as objects. File resources
// (stop_words_file, synonyms_file) are refused.
package analyzer
