package analyzer

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/strata-db/strata/internal/errcode"
)

// newFilters builds analyzer_params' "filter" list: each item a built-in
// filter's name or an object with a "type" and that filter's params. Items
// of other JSON types are skipped, as Milvus does.
func newFilters(v any) ([]filter, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, errcode.Invalid("filter params should be array")
	}
	var out []filter
	for _, item := range arr {
		switch it := item.(type) {
		case string:
			f, ok := namedFilter(it)
			if !ok {
				return nil, errcode.Invalid("build analyzer failed, filter not found :%s", it)
			}
			out = append(out, f)
		case map[string]any:
			f, err := objectFilter(it)
			if err != nil {
				return nil, err
			}
			out = append(out, f)
		}
	}
	return out, nil
}

// namedFilter is the filter a bare name in "filter" stands for.
func namedFilter(name string) (filter, bool) {
	switch name {
	case "lowercase":
		return lowercase{}, true
	case "asciifolding":
		return asciiFolding{}, true
	case "alphanumonly":
		return keepIf(func(s string) bool {
			for i := 0; i < len(s); i++ {
				if !isASCIIAlnum(s[i]) {
					return false
				}
			}
			return true
		}), true
	case "cncharonly":
		return keepIf(func(s string) bool { return strings.IndexFunc(s, isHanRune) >= 0 }), true
	case "cnalphanumonly":
		return cnAlphaNumOnly{}, true
	case "removepunct":
		return keepIf(func(s string) bool { return strings.IndexFunc(s, isPunctOrSpace) < 0 }), true
	}
	return nil, false
}

// objectFilter builds a filter given as an object with a "type".
func objectFilter(p map[string]any) (filter, error) {
	tv, ok := p["type"]
	if !ok {
		return nil, errcode.Invalid("no type field in filter params")
	}
	name, ok := tv.(string)
	if !ok {
		return nil, errcode.Invalid("filter type should be string")
	}
	switch name {
	case "length":
		n, set, err := uintParam(p, "max", "length filter")
		if err != nil || !set {
			return nil, errcode.Invalid("lenth max param was none or not uint")
		}
		return keepIf(func(s string) bool { return uint64(len(s)) <= n }), nil
	case "stop":
		return newStopFromParams(p)
	case "decompounder":
		v, ok := p["word_list"]
		if !ok {
			return nil, errcode.Invalid("decompounder word list should be array")
		}
		words, err := stringList(v, "decompounder word_list")
		if err != nil {
			return nil, err
		}
		return newDecompounder(words), nil
	case "stemmer":
		lang, ok := p["language"].(string)
		if !ok {
			return nil, errcode.Invalid("stemmer language field should be string")
		}
		stem, err := stemmerFor(lang)
		if err != nil {
			return nil, err
		}
		return newStemmer(stem), nil
	case "regex":
		v, ok := p["expr"]
		if !ok {
			return nil, errcode.Invalid("must set expr for regex filter")
		}
		expr, ok := v.(string)
		if !ok {
			return nil, errcode.Invalid("regex filter expr must be string")
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, errcode.Invalid("regex expression invalid, expr:%s, err: %v", expr, err)
		}
		return keepIf(re.MatchString), nil
	case "synonym":
		return newSynonymFilter(p)
	}
	return nil, errcode.Invalid("unsupport filter type: %s", name)
}

// keepIf is a filter that keeps the tokens whose text satisfies it.
type keepIf func(string) bool

func (k keepIf) apply(toks []Token) []Token {
	out := toks[:0]
	for _, t := range toks {
		if k(t.Text) {
			out = append(out, t)
		}
	}
	return out
}

// cnAlphaNumOnly keeps the tokens holding a Han character or an ASCII
// letter or digit (Milvus's cnalphanumonly).
type cnAlphaNumOnly struct{}

func (cnAlphaNumOnly) apply(toks []Token) []Token {
	return keepIf(func(s string) bool {
		return strings.IndexFunc(s, func(r rune) bool { return isHanRune(r) || r < 0x80 && isASCIIAlnum(byte(r)) }) >= 0
	}).apply(toks)
}

func isHanRune(r rune) bool { return unicode.Is(unicode.Han, r) }

// isPunctOrSpace is Rust regex's [\p{Punct}\s].
func isPunctOrSpace(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) }

// lowercase lowercases each token as Rust's str::to_lowercase does (which
// tantivy's LowerCaser uses): per character, with "İ" to "i̇" and a
// word-final "Σ" to "ς".
type lowercase struct{}

func (lowercase) apply(toks []Token) []Token {
	for i := range toks {
		toks[i].Text = toLower(toks[i].Text)
	}
	return toks
}

func toLower(s string) string {
	if !strings.ContainsAny(s, "Σİ") {
		return strings.ToLower(s)
	}
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		switch {
		case r == 'İ':
			b.WriteString("i\u0307")
		case r == 'Σ' && i > 0 && unicode.IsLetter(rs[i-1]) && (i+1 == len(rs) || !unicode.IsLetter(rs[i+1])):
			b.WriteRune('ς')
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// stemmer rewrites each token to its stem.
type stemmer struct{ stem func(string) string }

func newStemmer(stem func(string) string) filter { return stemmer{stem: stem} }

func (s stemmer) apply(toks []Token) []Token {
	for i := range toks {
		toks[i].Text = s.stem(toks[i].Text)
	}
	return toks
}

// decompounder splits a token into dictionary words when the words, taken
// longest first from the left, cover it whole (tantivy's
// SplitCompoundWords); the parts keep the token's offsets and position.
type decompounder struct {
	words  map[string]bool
	maxLen int
}

func newDecompounder(words []string) filter {
	d := decompounder{words: map[string]bool{}}
	for _, w := range words {
		if w == "" {
			continue
		}
		d.words[w] = true
		d.maxLen = max(d.maxLen, len(w))
	}
	return d
}

func (d decompounder) apply(toks []Token) []Token { return expandTokens(toks, d.split) }

// expandTokens replaces each token by copies of it with the texts repl
// gives for its text; a token repl gives none for stays as it is.
func expandTokens(toks []Token, repl func(string) []string) []Token {
	var out []Token
	for _, t := range toks {
		texts := repl(t.Text)
		if len(texts) == 0 {
			out = append(out, t)
			continue
		}
		for _, x := range texts {
			c := t
			c.Text = x
			out = append(out, c)
		}
	}
	return out
}

// split returns s's parts, or nil when the words do not cover s.
func (d decompounder) split(s string) []string {
	var parts []string
	for i := 0; i < len(s); {
		n := 0
		for l := min(d.maxLen, len(s)-i); l > 0; l-- {
			if d.words[s[i:i+l]] {
				n = l
				break
			}
		}
		if n == 0 {
			return nil
		}
		parts = append(parts, s[i:i+n])
		i += n
	}
	return parts
}
