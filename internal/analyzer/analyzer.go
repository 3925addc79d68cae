package analyzer

import (
	"bytes"
	"encoding/json"
	"hash/crc32"
	"strings"

	"github.com/strata-db/strata/internal/errcode"
)

// Token is one token of an analyzed text.
type Token struct {
	// Text is the token after the filters.
	Text string
	// Start and End are the byte offsets of the token's source in the input.
	Start, End int
	// Position is the token's position: its ordinal in the tokenizer's
	// output for the standard and whitespace tokenizers, the index of its
	// first character (in runes) for jieba and icu, as in Milvus.
	Position int
	// Length is how many positions the token spans (Milvus's
	// position_length): 1, or its length in runes for jieba and icu.
	Length int
}

// Analyzer turns a text into its tokens.
type Analyzer interface {
	// Analyze returns the tokens of text, in order.
	Analyze(text string) []Token
}

// hashPrefix is how many leading bytes of a token Hash reads, as Milvus
// does (typeutil.HashString2LessUint32).
const hashPrefix = 100

// Hash is the sparse-vector dimension of a token: CRC-32 (IEEE) of its first
// 100 bytes, below 2^32-1, the hash Milvus's BM25 function uses, so a token's
// dimension is the same in Strata and Milvus.
func Hash(token string) uint32 {
	if len(token) > hashPrefix {
		token = token[:hashPrefix]
	}
	return crc32.ChecksumIEEE([]byte(token)) % (1<<32 - 1)
}

// tokenizer splits a text into tokens; filters then rewrite or drop them.
type tokenizer interface {
	tokenize(text string) []Token
}

// filter rewrites or drops tokens; it may reuse toks' backing array.
type filter interface {
	apply(toks []Token) []Token
}

// pipeline is an Analyzer: one tokenizer, then filters in order.
type pipeline struct {
	tok     tokenizer
	filters []filter
}

func (p *pipeline) Analyze(text string) []Token {
	toks := p.tok.tokenize(text)
	for _, f := range p.filters {
		toks = f.apply(toks)
	}
	return toks
}

// New builds the analyzer analyzer_params describes ("" or "{}" is the
// standard analyzer). Params Milvus refuses give an errcode.Invalid error
// naming the offending key.
func New(params string) (Analyzer, error) {
	if strings.TrimSpace(params) == "" {
		return standardAnalyzer(nil), nil
	}
	p, err := decodeObject(params)
	if err != nil {
		return nil, err
	}
	return build(p)
}

// decodeObject parses params as a JSON object, numbers kept as json.Number
// so that integer-only keys can refuse fractions.
func decodeObject(params string) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(params)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errcode.Invalid("analyzer params must be a json object: %v", err)
	}
	if dec.More() {
		return nil, errcode.Invalid("analyzer params must be a json object: trailing data after the object")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errcode.Invalid("analyzer params should be a json map")
	}
	return m, nil
}

// build makes the analyzer of one analyzer_params object: a built-in
// ("type") or a custom one ("tokenizer" and optional "filter").
func build(p map[string]any) (Analyzer, error) {
	if len(p) == 0 {
		return standardAnalyzer(nil), nil
	}
	if t, ok := p["type"]; ok {
		name, ok := t.(string)
		if !ok {
			return nil, errcode.Invalid("analyzer type should be string")
		}
		return builtin(name, p)
	}
	tp, ok := p["tokenizer"]
	if !ok {
		return nil, errcode.Invalid("tokenizer name or type must be set")
	}
	tok, err := newTokenizer(tp)
	if err != nil {
		return nil, err
	}
	out := &pipeline{tok: tok}
	for key, v := range p {
		switch key {
		case "tokenizer":
		case "filter":
			fs, err := newFilters(v)
			if err != nil {
				return nil, err
			}
			out.filters = fs
		default:
			return nil, errcode.Invalid("unknown analyzer option key: %s", key)
		}
	}
	return out, nil
}

// builtin builds the built-in analyzer name ("standard", "english",
// "chinese"), with the extra stop words of its optional "stop_words".
func builtin(name string, p map[string]any) (Analyzer, error) {
	var stop []string
	if v, ok := p["stop_words"]; ok {
		words, err := stringList(v, "stop_words")
		if err != nil {
			return nil, err
		}
		stop = expandStopWords(words)
	}
	switch name {
	case "standard":
		return standardAnalyzer(stop), nil
	case "english":
		// Milvus's order: stem first, then drop the English stop words
		// (so a stop word is matched against its stem), then the user's.
		a := &pipeline{tok: alnumTokenizer{}, filters: []filter{lowercase{}, newStemmer(englishStem), newStopFilter(builtinStopWords("_english_"))}}
		if len(stop) > 0 {
			a.filters = append(a.filters, newStopFilter(stop))
		}
		return a, nil
	case "chinese":
		a := &pipeline{tok: defaultJieba(), filters: []filter{cnAlphaNumOnly{}}}
		if len(stop) > 0 {
			a.filters = append(a.filters, newStopFilter(stop))
		}
		return a, nil
	}
	return nil, errcode.Invalid("unknown build-in analyzer type: %s", name)
}

// standardAnalyzer is the standard tokenizer and lowercase, then stop when
// stop words are given.
func standardAnalyzer(stop []string) Analyzer {
	a := &pipeline{tok: alnumTokenizer{}, filters: []filter{lowercase{}}}
	if len(stop) > 0 {
		a.filters = append(a.filters, newStopFilter(stop))
	}
	return a
}

// stringList reads v as a JSON array of strings; key names it in errors.
func stringList(v any, key string) ([]string, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, errcode.Invalid("%s should be array", key)
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil, errcode.Invalid("%s list item should be string", key)
		}
		out = append(out, s)
	}
	return out, nil
}

// boolParam reads key of p as a JSON boolean, def when absent.
func boolParam(p map[string]any, key, what string, def bool) (bool, error) {
	v, ok := p[key]
	if !ok {
		return def, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, errcode.Invalid("%s %s must be a boolean", what, key)
	}
	return b, nil
}

// uintParam reads key of p as a non-negative JSON integer.
func uintParam(p map[string]any, key, what string) (uint64, bool, error) {
	v, ok := p[key]
	if !ok {
		return 0, false, nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, true, errcode.Invalid("%s %s should be a non-negative integer", what, key)
	}
	var u uint64
	if err := json.Unmarshal([]byte(n.String()), &u); err != nil {
		return 0, true, errcode.Invalid("%s %s should be a non-negative integer, got %s", what, key, n)
	}
	return u, true, nil
}
