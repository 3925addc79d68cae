package analyzer

import (
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/segment"

	"github.com/strata-db/strata/internal/errcode"
)

// newTokenizer builds the tokenizer of analyzer_params' "tokenizer": a name,
// or an object with a "type" and that tokenizer's params.
func newTokenizer(v any) (tokenizer, error) {
	var name string
	var p map[string]any
	switch t := v.(type) {
	case string:
		name = t
	case map[string]any:
		tv, ok := t["type"]
		if !ok {
			return nil, errcode.Invalid("costum tokenizer must set type")
		}
		s, ok := tv.(string)
		if !ok {
			return nil, errcode.Invalid("tokenizer type should be string")
		}
		name, p = s, t
	default:
		return nil, errcode.Invalid("tokenizer name should be string or dict")
	}
	switch name {
	case "standard":
		return newStandardTokenizer(p)
	case "whitespace":
		return whitespaceTokenizer{}, nil
	case "jieba":
		if p == nil {
			return defaultJieba(), nil
		}
		return newJiebaTokenizer(p)
	case "icu":
		return icuTokenizer{}, nil
	case "lindera":
		return nil, errcode.Invalid("unsupported tokenizer: lindera (its Japanese and Korean dictionaries are not part of Strata)")
	case "language_identifier":
		return nil, errcode.Invalid("unsupported tokenizer: language_identifier (Strata has no language detector; use multi_analyzer_params with a language field)")
	case "grpc":
		return nil, errcode.Invalid("unsupported tokenizer: grpc (Strata does not call external tokenizer services)")
	}
	return nil, errcode.Invalid("unsupported tokenizer: %s", name)
}

// Milvus's bounds of the standard tokenizer's max_token_length (Lucene's).
const (
	defaultMaxTokenLength = 255
	maxTokenLengthLimit   = 1024 * 1024
)

// newStandardTokenizer builds the standard tokenizer: runs of letters and
// digits, or, with "uax29": true, Unicode word segmentation (UAX #29) with
// tokens cut at "max_token_length" runes.
func newStandardTokenizer(p map[string]any) (tokenizer, error) {
	uax29, err := boolParam(p, "uax29", "standard tokenizer", false)
	if err != nil {
		return nil, err
	}
	n, set, err := uintParam(p, "max_token_length", "standard tokenizer")
	if set && !uax29 {
		return nil, errcode.Invalid("standard tokenizer max_token_length requires uax29 to be true")
	}
	if err != nil {
		return nil, err
	}
	if !uax29 {
		return alnumTokenizer{}, nil
	}
	if !set {
		n = defaultMaxTokenLength
	}
	if n == 0 || n > maxTokenLengthLimit {
		return nil, errcode.Invalid("standard tokenizer max_token_length must be between 1 and %d", maxTokenLengthLimit)
	}
	return uax29Tokenizer{max: int(n)}, nil
}

// isAlnum is Rust's char::is_alphanumeric: alphabetic or numeric.
func isAlnum(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.In(r, unicode.Other_Alphabetic)
}

// alnumTokenizer is Milvus's default standard tokenizer (tantivy's
// SimpleTokenizer): maximal runs of alphanumeric characters.
type alnumTokenizer struct{}

func (alnumTokenizer) tokenize(text string) []Token {
	return runs(text, isAlnum)
}

// whitespaceTokenizer splits on ASCII whitespace, as tantivy's does.
type whitespaceTokenizer struct{}

func (whitespaceTokenizer) tokenize(text string) []Token {
	return runs(text, func(r rune) bool {
		return r != ' ' && r != '\t' && r != '\n' && r != '\f' && r != '\r'
	})
}

// runs returns the maximal runs of characters in, numbered 0, 1, 2, ...
func runs(text string, in func(rune) bool) []Token {
	var out []Token
	start := -1
	for i, r := range text {
		if in(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, Token{Text: text[start:i], Start: start, End: i, Position: len(out), Length: 1})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, Token{Text: text[start:], Start: start, End: len(text), Position: len(out), Length: 1})
	}
	return out
}

// segments returns the UAX #29 word segments of text with their types
// (segment.None for spaces and punctuation). Text the segmenter cannot
// parse (invalid UTF-8) is one segment.
func segments(text string) ([][]byte, []int) {
	segs, types, _, err := segment.SegmentWordsDirect([]byte(text), nil, nil)
	if err != nil {
		return [][]byte{[]byte(text)}, []int{segment.Letter}
	}
	return segs, types
}

// uax29Tokenizer is the standard tokenizer with "uax29": the word segments
// of UAX #29 that hold a letter, digit or symbol, cut into pieces of at most
// max runes.
type uax29Tokenizer struct{ max int }

func (t uax29Tokenizer) tokenize(text string) []Token {
	segs, types := segments(text)
	var out []Token
	off := 0
	for i, s := range segs {
		start := off
		off += len(s)
		if types[i] == segment.None && !hasWordChar(s) {
			continue
		}
		for len(s) > 0 {
			n, cut := 0, len(s)
			for j := range string(s) {
				if n == t.max {
					cut = j
					break
				}
				n++
			}
			out = append(out, Token{Text: string(s[:cut]), Start: start, End: start + cut, Position: len(out), Length: 1})
			s, start = s[cut:], start+cut
		}
	}
	return out
}

// hasWordChar reports whether s holds an alphanumeric character or a symbol
// (emoji).
func hasWordChar(s []byte) bool {
	for _, r := range string(s) {
		if isAlnum(r) || unicode.Is(unicode.So, r) || r == '\u20e3' {
			return true
		}
	}
	return false
}

// icuTokenizer is Unicode word segmentation (UAX #29) keeping every segment,
// spaces and punctuation included, positioned by rune offset as Milvus's
// icu tokenizer is. Unlike ICU it has no dictionary for Chinese, Japanese or
// Thai words: a run of ideographs is one token per character.
type icuTokenizer struct{}

func (icuTokenizer) tokenize(text string) []Token {
	segs, _ := segments(text)
	out := make([]Token, 0, len(segs))
	off, pos := 0, 0
	for _, s := range segs {
		n := utf8.RuneCount(s)
		out = append(out, Token{Text: string(s), Start: off, End: off + len(s), Position: pos, Length: n})
		off += len(s)
		pos += n
	}
	return out
}
