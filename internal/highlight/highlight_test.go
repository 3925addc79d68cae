package highlight

import (
	"strings"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/strata-db/strata/internal/analyzer"
	"github.com/strata-db/strata/internal/errcode"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func standard(t *testing.T) analyzer.Analyzer {
	t.Helper()
	a, err := analyzer.New("")
	require.NoError(t, err)
	return a
}

func cfg(pre, post []string, offset, size, num int) *Config {
	return &Config{PreTags: pre, PostTags: post, FragmentOffset: offset, FragmentSize: size, NumOfFragments: num}
}

func TestFragmentsEnglish(t *testing.T) {
	a := standard(t)
	const doc = "Milvus supports full text search. Use BM25 for keyword relevance. Filters can narrow results."
	const pipes = "I have the seat full of water! Like, full of water!"
	braces := []string{"{"}
	closing := []string{"}"}
	cases := []struct {
		name  string
		c     *Config
		text  string
		query string
		want  []string
	}{
		{
			"defaults cut 100 characters from the first match", &Config{PreTags: braces, PostTags: closing, FragmentSize: 100, NumOfFragments: 5},
			"my second test doc. Milvus is an open-source vector database that suits AI applications of every size from running a demo",
			"test",
			[]string{"{test} doc. Milvus is an open-source vector database that suits AI applications of every size from run"},
		},
		{
			"offset keeps leading context", cfg(braces, closing, 4, 60, 1), doc, "BM25",
			[]string{"Use {BM25} for keyword relevance. Filters can narrow results."},
		},
		{"fragment ends at the text end", cfg(braces, closing, 0, 10, 1), "Must be water.", "water", []string{"{water}."}},
		{
			"later match in reach joins the fragment", cfg(braces, closing, 0, 100, 1), pipes, "water",
			[]string{"{water}! Like, full of {water}!"},
		},
		{
			"match past the end starts a new fragment", cfg(braces, closing, 0, 9, 2), pipes, "water",
			[]string{"{water}! Li", "{water}!"},
		},
		{"num_of_fragments caps the fragments", cfg(braces, closing, 0, 9, 1), pipes, "water", []string{"{water}! Li"}},
		{"num_of_fragments 0 returns none", cfg(braces, closing, 0, 9, 0), pipes, "water", []string{}},
		{
			"a match longer than the size is kept whole", cfg(braces, closing, 0, 1, 10), pipes, "water",
			[]string{"{water}", "{water}"},
		},
		{
			"offset reaching back overlaps the previous fragment, untagged", cfg([]string{"="}, []string{"="}, 100, 5, 2), pipes, "water",
			[]string{"I have the seat full of =water=", "I have the seat full of water! Like, full of =water="},
		},
		{
			"offset past the fragment size", cfg(braces, closing, 5, 1, 1), "7654321 keyword 1234567", "keyword",
			[]string{"4321 {keyword}"},
		},
		{
			"several query terms, second fragment keeps only its match", cfg(braces, closing, 5, 10, 10), "A leakage of what?",
			"A leakage of what?",
			[]string{"{A} {leakage} {of}", "e of {what}?"},
		},
		{"numbers are tokens", cfg(braces, closing, 100, 5, 2), "word 1 word 12 word 123", "1", []string{"word {1}"}},
		{"sub-words are tokens", cfg(braces, closing, 0, 1, 1), "There is a sub-word in this sentence", "sub", []string{"{sub}"}},
		{"no match, no fragment", cfg(braces, closing, 0, 100, 5), doc, "nonexistent", []string{}},
		{"empty text", cfg(braces, closing, 0, 100, 5), "", "water", []string{}},
		{
			"adjacent matches merge into one highlight", cfg(braces, closing, 0, 100, 5), "key-value store", "key value",
			[]string{"{key}-{value} store"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.c.Fragments(tc.text, a.Analyze(tc.text), TermsOf(a.Analyze(tc.query)))
			require.Equal(t, tc.want, got)
		})
	}
}

func TestFragmentsCaseFolding(t *testing.T) {
	// The standard analyzer lowercases text and query alike, so WATER
	// finds water, and the original spelling is what gets tagged.
	a := standard(t)
	c := cfg([]string{"["}, []string{"]"}, 0, 100, 5)
	got := c.Fragments("Water, WATER and water", a.Analyze("Water, WATER and water"), TermsOf(a.Analyze("WATER")))
	require.Equal(t, []string{"[Water], [WATER] and [water]"}, got)

	// Terms are compared as analyzed: tokens that were not folded do not
	// match a folded term.
	raw := []analyzer.Token{{Text: "Water", Start: 0, End: 5}, {Text: "water", Start: 7, End: 12}}
	c.FragmentOffset = 100
	require.Equal(t, []string{"Water  [water]"}, c.Fragments("Water  water", raw, Terms{"water": {}}))
}

func TestFragmentsTagsCycle(t *testing.T) {
	a := standard(t)
	const text = "key key key key key"
	toks := a.Analyze(text)
	terms := TermsOf(a.Analyze("key"))
	cases := []struct {
		name      string
		pre, post []string
		want      string
	}{
		{"pairs cycle", []string{"{", "<", "="}, []string{"}", ">", "="}, "{key} <key> =key= {key} <key>"},
		{"lists of different lengths cycle independently", []string{"{"}, []string{"}", ">"}, "{key} {key> {key} {key> {key}"},
		{
			"long tags",
			[]string{strings.Repeat("{", 999)},
			[]string{strings.Repeat("}", 999)},
			strings.Repeat("{", 999) + "key" + strings.Repeat("}", 999) + " " +
				strings.Repeat(strings.Repeat("{", 999)+"key"+strings.Repeat("}", 999)+" ", 3) +
				strings.Repeat("{", 999) + "key" + strings.Repeat("}", 999),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, []string{tc.want}, cfg(tc.pre, tc.post, 0, 100, 1).Fragments(text, toks, terms))
		})
	}
	// The cycle restarts in each fragment.
	got := cfg([]string{"{", "<"}, []string{"}", ">"}, 0, 1, 5).Fragments(text, toks, terms)
	require.Equal(t, []string{"{key}", "{key}", "{key}", "{key}", "{key}"}, got)
}

func TestFragmentsChinese(t *testing.T) {
	// Tokens as a Chinese word segmenter gives them: byte offsets, counted
	// by Fragments in characters.
	const text = "青年林舟怀着不安在巷道行走，踏入其内，柔亮光点缓缓旋转，如同呼吸般起伏。"
	tok := func(word string, nth int) analyzer.Token {
		i := -1
		for range nth + 1 {
			j := strings.Index(text[i+1:], word)
			require.GreaterOrEqual(t, j, 0, word)
			i += 1 + j
		}
		return analyzer.Token{Text: word, Start: i, End: i + len(word)}
	}
	tokens := []analyzer.Token{
		tok("青年", 0), tok("林舟", 0), tok("不安", 0), tok("行走", 0), tok("光点", 0),
		tok("缓缓", 0), tok("旋转", 0), tok("如同", 0), tok("呼吸", 0), tok("般", 0), tok("起伏", 0),
	}
	cases := []struct {
		name  string
		c     *Config
		terms Terms
		want  []string
	}{
		{
			"adjacent words highlight as one", cfg([]string{"{"}, []string{"}"}, 0, 1, 10),
			Terms{"如同": {}, "呼吸": {}, "般": {}, "起伏": {}},
			[]string{"{如同呼吸般起伏}"},
		},
		{
			"size counts characters, not bytes", cfg([]string{"{"}, []string{"}"}, 0, 4, 5),
			Terms{"林舟": {}},
			[]string{"{林舟}怀着"},
		},
		{
			"offset counts characters", cfg([]string{"{"}, []string{"}"}, 3, 1, 5),
			Terms{"行走": {}},
			[]string{"在巷道{行走}"},
		},
		{
			"two fragments", cfg([]string{"<b>"}, []string{"</b>"}, 0, 2, 5),
			Terms{"青年": {}, "旋转": {}},
			[]string{"<b>青年</b>", "<b>旋转</b>"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.c.Fragments(text, tokens, tc.terms))
		})
	}
}

func TestMatchSpansMerge(t *testing.T) {
	toks := []analyzer.Token{
		{Text: "ab", Start: 0, End: 2},
		{Text: "b", Start: 1, End: 2},  // inside the previous one: dropped
		{Text: "cd", Start: 2, End: 4}, // touching: merged
		{Text: "x", Start: 6, End: 7},
		{Text: "x", Start: 6, End: 9},    // same start, longer: extends
		{Text: "zz", Start: 40, End: 50}, // past the text: clamped away
	}
	got := matchSpans("abcd  xyz", toks, Terms{"ab": {}, "b": {}, "cd": {}, "x": {}, "zz": {}})
	require.Equal(t, []span{{0, 4}, {6, 9}}, got)
}

func kvs(pairs ...string) []*commonpb.KeyValuePair {
	var out []*commonpb.KeyValuePair
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, &commonpb.KeyValuePair{Key: pairs[i], Value: pairs[i+1]})
	}
	return out
}

func TestParse(t *testing.T) {
	c, err := Parse(nil)
	require.NoError(t, err)
	require.Equal(t, Defaults(), *c)

	c, err = Parse(kvs("pre_tags", `["{","<"]`, "post_tags", `["}"]`, "fragment_offset", "5", "fragment_size", "10",
		"num_of_fragments", "0", "highlight_search_text", "True",
		"highlight_query", `[{"type": "TextMatch", "field": "doc", "text": "seat"}]`))
	require.NoError(t, err)
	require.Equal(t, Config{
		PreTags: []string{"{", "<"}, PostTags: []string{"}"}, FragmentOffset: 5, FragmentSize: 10,
		SearchText: true, Queries: []Query{{Type: QueryTextMatch, Field: "doc", Text: "seat"}},
	}, *c)

	c, err = Parse(kvs("queries", `[{"type": "TextMatch", "field": "doc", "text": "x"}]`, "highlight_search_text", "false"))
	require.NoError(t, err)
	require.Equal(t, []Query{{Type: QueryTextMatch, Field: "doc", Text: "x"}}, c.Queries)
	require.False(t, c.SearchText)
}

func TestParseInvalid(t *testing.T) {
	cases := []struct {
		params []*commonpb.KeyValuePair
		msg    string
	}{
		{kvs("fragment_size", "0"), "invalid fragment_size: 0: invalid parameter"},
		{kvs("fragment_size", "-1"), "invalid fragment_size: -1: invalid parameter"},
		{kvs("fragment_size", "0.1"), "invalid fragment_size: 0.1: invalid parameter"},
		{kvs("fragment_offset", "-1"), "invalid fragment_offset: -1: invalid parameter"},
		{kvs("fragment_offset", "0.1"), "invalid fragment_offset: 0.1: invalid parameter"},
		{kvs("num_of_fragments", "-1"), "invalid num_of_fragments: -1: invalid parameter"},
		{kvs("num_of_fragments", "0.1"), "invalid num_of_fragments: 0.1: invalid parameter"},
		{kvs("pre_tags", "[]"), "pre_tags cannot be empty list: invalid parameter"},
		{kvs("post_tags", "[]"), "post_tags cannot be empty list: invalid parameter"},
		{kvs("pre_tags", `"{"`), "unmarshal pre_tags as string list failed"},
		{kvs("highlight_search_text", "maybe"), "unmarshal highlight_search_text as bool failed"},
		{kvs("highlight_query", `{"type": "TextMatch"}`), "unmarshal highlight queries as json array failed"},
		{kvs("highlight_query", `["x"]`), "item in array is not json object"},
		{kvs("highlight_query", `[{"type": "TextMatch", "field": "doc"}]`), "must set `text` in query"},
		{kvs("highlight_query", `[{"type": "TextMatch", "field": 1, "text": "a"}]`), "`field` must be string"},
		{kvs("highlight_query", `[{"type": "PhraseMatch", "field": "doc", "text": "a"}]`), "invalid highlight query type: PhraseMatch"},
	}
	for _, tc := range cases {
		t.Run(tc.msg, func(t *testing.T) {
			_, err := Parse(tc.params)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.msg)
			require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err))
		})
	}
}

func TestFragmentsWithoutTags(t *testing.T) {
	a := standard(t)
	c := &Config{FragmentSize: 100, NumOfFragments: 1}
	require.Equal(t, []string{"water!"}, c.Fragments("Must be water!", a.Analyze("Must be water!"), TermsOf(a.Analyze("water"))))
}
