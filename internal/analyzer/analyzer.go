package analyzer

import (
	"encoding/json"
	"hash/crc32"
	"strings"
	"unicode"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/errcode"
)

// Token is one token of an analyzed text.
type Token struct {
	// Text is the token after the filters.
	Text string
	// Start and End are the byte offsets of the token's source in the input.
	Start, End int
	// Position is the token's ordinal in the tokenizer's output.
	Position int
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

// New builds the analyzer analyzer_params describes ("" is the standard
// analyzer). Params Milvus refuses give an errcode.Invalid error naming the
// offending key.
func New(params string) (Analyzer, error) {
	p := map[string]any{}
	if strings.TrimSpace(params) != "" {
		if err := json.Unmarshal([]byte(params), &p); err != nil {
			return nil, errcode.Invalid("analyzer params must be a json object: %v", err)
		}
	}
	if t, ok := p["type"]; ok {
		if t != "standard" {
			return nil, errcode.Invalid("unsupported analyzer type %v", t)
		}
	}
	return standard{}, nil
}

// Field is the analyzer of a VarChar field: one analyzer, or one per
// language when the field has multi_analyzer_params.
type Field struct {
	single Analyzer
}

// ForField builds the analyzer of field f of schema s from its type params
// (analyzer_params, multi_analyzer_params). f need not have enable_analyzer
// set; the caller checks that.
func ForField(s *schemapb.CollectionSchema, f *schemapb.FieldSchema) (*Field, error) {
	var params string
	for _, kv := range f.GetTypeParams() {
		if kv.GetKey() == "analyzer_params" {
			params = kv.GetValue()
		}
	}
	a, err := New(params)
	if err != nil {
		return nil, err
	}
	return &Field{single: a}, nil
}

// ByField names the field whose value chooses a row's analyzer, or "" when
// the field has a single analyzer.
func (f *Field) ByField() string { return "" }

// Analyze returns the tokens of text, analyzed by the analyzer of language
// lang (ignored when ByField is "").
func (f *Field) Analyze(text, lang string) []Token { return f.single.Analyze(text) }

// standard splits on Unicode word boundaries (runs of letters and digits)
// and lowercases.
type standard struct{}

func (standard) Analyze(text string) []Token {
	var out []Token
	start := -1
	for i, r := range text {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		if word && start < 0 {
			start = i
		}
		if !word && start >= 0 {
			out = append(out, Token{Text: strings.ToLower(text[start:i]), Start: start, End: i, Position: len(out)})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, Token{Text: strings.ToLower(text[start:]), Start: start, End: len(text), Position: len(out)})
	}
	return out
}
