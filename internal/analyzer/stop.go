package analyzer

import (
	_ "embed" // the built-in stop word lists
	"strings"
	"sync"

	"github.com/strata-db/strata/internal/errcode"
)

//go:embed data/stop_words.txt
var stopWordsData string

// stopLists are the built-in stop word lists by name ("_english_", ...).
var stopLists = sync.OnceValue(func() map[string][]string {
	out := map[string][]string{}
	cur := ""
	for _, line := range strings.Split(stopWordsData, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			cur = line[1 : len(line)-1]
		case cur != "":
			out[cur] = append(out[cur], line)
		}
	}
	return out
})

// builtinStopWords returns the built-in list name ("_english_").
func builtinStopWords(name string) []string { return stopLists()[name] }

// expandStopWords replaces each built-in list name (a word "_danish_" etc.)
// by the list's words; other words stay as they are.
func expandStopWords(words []string) []string {
	out := make([]string, 0, len(words))
	for _, w := range words {
		if l, ok := stopLists()[w]; ok {
			out = append(out, l...)
			continue
		}
		out = append(out, w)
	}
	return out
}

// newStopFromParams builds the stop filter of {"type": "stop",
// "stop_words": [...]}. Strata has no file resources, so stop_words_file
// is refused.
func newStopFromParams(p map[string]any) (filter, error) {
	if _, ok := p["stop_words_file"]; ok {
		return nil, errcode.Invalid("stop filter stop_words_file is not supported: file resources are not available, list the words in stop_words")
	}
	v, ok := p["stop_words"]
	if !ok {
		return nil, errcode.Invalid("stop filter stop_words must be set")
	}
	words, err := stringList(v, "stop_words")
	if err != nil {
		return nil, err
	}
	return newStopFilter(expandStopWords(words)), nil
}

// stopFilter drops the tokens that are stop words (compared exactly, after
// the filters before it).
type stopFilter map[string]struct{}

func newStopFilter(words []string) filter {
	s := make(stopFilter, len(words))
	for _, w := range words {
		s[w] = struct{}{}
	}
	return s
}

func (s stopFilter) apply(toks []Token) []Token {
	out := toks[:0]
	for _, t := range toks {
		if _, stop := s[t.Text]; !stop {
			out = append(out, t)
		}
	}
	return out
}
