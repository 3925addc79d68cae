package textindex

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/strata-db/strata/internal/analyzer"
	"github.com/strata-db/strata/internal/column"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func standard(t *testing.T) *analyzer.Field {
	t.Helper()
	an, err := analyzer.ForField(nil, nil)
	require.NoError(t, err)
	return an
}

// phraseDocs are the documents of the phrase table; the expected rows of
// each case are what tantivy's phrase query (the engine Milvus embeds)
// returns for the same tokens and slop.
var phraseDocs = []string{
	"machine learning boosts efficiency", // 0
	"learning machine",                   // 1
	"deep learning machine",              // 2
	"machine deep learning",              // 3
	"machine a b learning",               // 4
	"a machine a machine b learning",     // 5
	"learning a machine",                 // 6
}

// TestMatchPhraseSpan pins the rule for three or more tokens: the whole
// shifted span counts, not each step (tantivy answers the same).
func TestMatchPhraseSpan(t *testing.T) {
	docs := []string{"a x b x c", "a x x b x x c", "c b a", "a b c"}
	x := build(t, docs, nil)
	for slop, want := range [][]int{{3}, {3}, {0, 3}, {0, 3}, {0, 1, 2, 3}, {0, 1, 2, 3}} {
		out := make([]bool, len(docs))
		x.MatchPhrase(query(t, "a b c"), uint32(slop), out)
		require.Equal(t, want, rows(out), "slop %d", slop)
	}
}

func build(t *testing.T, docs []string, valid []bool) *Index {
	t.Helper()
	x := New(standard(t))
	x.Sync(&column.Strings{Data: docs, Nulls: column.Nulls{Valid: valid}}, nil, len(docs))
	return x
}

func query(t *testing.T, q string) []QueryToken {
	var out []QueryToken
	for _, tok := range standard(t).Analyze(q, "") {
		out = append(out, QueryToken{Text: tok.Text, Position: tok.Position})
	}
	return out
}

func rows(out []bool) []int {
	r := []int{}
	for i, ok := range out {
		if ok {
			r = append(r, i)
		}
	}
	return r
}

func TestMatchPhrase(t *testing.T) {
	x := build(t, phraseDocs, nil)
	cases := []struct {
		q    string
		slop uint32
		want []int
	}{
		{"machine learning", 0, []int{0}},
		{"machine learning", 1, []int{0, 3, 5}},
		{"machine learning", 2, []int{0, 1, 2, 3, 4, 5}},
		{"machine learning", 3, []int{0, 1, 2, 3, 4, 5, 6}},
		{"learning machine", 0, []int{1, 2}},
		{"learning machine", 1, []int{1, 2, 6}},
		{"learning machine", 2, []int{0, 1, 2, 6}},
		{"learning machine", 3, []int{0, 1, 2, 3, 5, 6}},
		{"learning machine", 4, []int{0, 1, 2, 3, 4, 5, 6}},
		{"machine machine", 0, []int{}},
		{"machine machine", 1, []int{0, 1, 2, 3, 4, 5, 6}},
		{"a machine learning", 0, []int{}},
		{"a machine learning", 1, []int{5}},
		{"a machine learning", 2, []int{4, 5}},
		{"a machine learning", 3, []int{4, 5, 6}},
		{"MACHINE, Learning!", 0, []int{0}}, // the query is analyzed too
		{"deep", 0, []int{2, 3}},            // one token: the rows holding it
		{"absent learning", 5, []int{}},
		{"", 0, []int{}},
		{"!!", 3, []int{}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%d", tc.q, tc.slop), func(t *testing.T) {
			out := make([]bool, len(phraseDocs))
			n := x.MatchPhrase(query(t, tc.q), tc.slop, out)
			require.Equal(t, tc.want, rows(out))
			require.Equal(t, len(tc.want), n)
		})
	}
}

func TestMatchAny(t *testing.T) {
	docs := []string{"test data 0", "content with 1", "this is test content", "sample document number 13 without keywords", "", "Test TEST"}
	x := build(t, docs, []bool{true, true, true, true, true, true})
	cases := []struct {
		terms []string
		min   int
		want  []int
	}{
		{[]string{"test"}, 1, []int{0, 2, 5}},
		{[]string{"0"}, 1, []int{0}},
		{[]string{"1"}, 1, []int{1}},
		{[]string{"content", "data"}, 1, []int{0, 1, 2}},
		{[]string{"content", "test"}, 2, []int{2}},
		{[]string{"content", "test", "content"}, 2, []int{2}}, // repeated terms count once
		{[]string{"test", "test"}, 2, []int{}},
		{[]string{"content", "test", "this"}, 3, []int{2}},
		{[]string{"content", "test"}, 3, []int{}},
		{[]string{"nothing"}, 1, []int{}},
		{nil, 1, []int{}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%v/%d", tc.terms, tc.min), func(t *testing.T) {
			out := make([]bool, len(docs))
			n := x.MatchAny(tc.terms, tc.min, out)
			require.Equal(t, tc.want, rows(out))
			require.Equal(t, len(tc.want), n)
		})
	}
}

func TestNullRowsHoldNoTerms(t *testing.T) {
	x := build(t, []string{"red apple", "red apple", "green apple"}, []bool{true, false, true})
	out := make([]bool, 3)
	x.MatchAny([]string{"apple"}, 1, out)
	require.Equal(t, []int{0, 2}, rows(out))
}

// TestSyncGrows checks the incremental path: a growing column indexed in
// steps answers like one indexed at once, and a reader of a shorter view
// never sees later rows.
func TestSyncGrows(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	words := []string{"alpha", "beta", "gamma", "delta", "eps"}
	var docs []string
	for range 300 {
		var w []string
		for range 1 + r.Intn(8) {
			w = append(w, words[r.Intn(len(words))])
		}
		docs = append(docs, strings.Join(w, " "))
	}
	whole := build(t, docs, nil)
	col := &column.Strings{}
	inc := New(standard(t))
	for len(col.Data) < len(docs) {
		k := min(len(docs), len(col.Data)+1+r.Intn(40))
		col.Data = docs[:k]
		inc.Sync(col, nil, k)
	}
	require.Equal(t, len(docs), inc.Rows())
	require.Equal(t, whole.Terms(), inc.Terms())
	for _, q := range []string{"alpha beta", "gamma gamma", "delta eps alpha"} {
		for slop := range uint32(4) {
			a, b := make([]bool, len(docs)), make([]bool, len(docs))
			whole.MatchPhrase(query(t, q), slop, a)
			inc.MatchPhrase(query(t, q), slop, b)
			require.Equal(t, a, b, "%s/%d", q, slop)
			short := make([]bool, 100)
			inc.MatchPhrase(query(t, q), slop, short)
			require.Equal(t, a[:100], short)
		}
	}
}

// TestMatchPhraseAgainstBruteForce compares MatchPhrase with a direct
// search over every choice of one occurrence per query token.
func TestMatchPhraseAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	words := []string{"a", "b", "c", "d"}
	var docs []string
	for range 400 {
		var w []string
		for range r.Intn(10) {
			w = append(w, words[r.Intn(len(words))])
		}
		docs = append(docs, strings.Join(w, " "))
	}
	x := build(t, docs, nil)
	an := standard(t)
	for range 200 {
		var qw []string
		for range 1 + r.Intn(4) {
			qw = append(qw, words[r.Intn(len(words))])
		}
		q := query(t, strings.Join(qw, " "))
		slop := uint32(r.Intn(5))
		out := make([]bool, len(docs))
		x.MatchPhrase(q, slop, out)
		for i, d := range docs {
			require.Equal(t, bruteForce(an.Analyze(d, ""), q, slop), out[i], "doc %q query %v slop %d", d, qw, slop)
		}
	}
}

func bruteForce(doc []analyzer.Token, q []QueryToken, slop uint32) bool {
	var pick func(i int, lo, hi int) bool
	pick = func(i int, lo, hi int) bool {
		if i == len(q) {
			return hi-lo <= int(slop)
		}
		for _, t := range doc {
			if t.Text != q[i].Text {
				continue
			}
			v := t.Position - q[i].Position
			nlo, nhi := v, v
			if i > 0 {
				nlo, nhi = min(lo, v), max(hi, v)
			}
			if pick(i+1, nlo, nhi) {
				return true
			}
		}
		return false
	}
	return pick(0, 0, 0)
}

func TestConcurrentSyncAndMatch(t *testing.T) {
	docs := slices.Repeat([]string{"one two three", "two three four"}, 500)
	x := New(standard(t))
	q := query(t, "two three")
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 100 * (g + 1); k <= len(docs); k += 100 {
				x.Sync(&column.Strings{Data: docs[:k]}, nil, k)
				out := make([]bool, k)
				if got := x.MatchPhrase(q, 0, out); got != k {
					t.Errorf("after syncing %d rows: %d match, want %d", k, got, k)
				}
			}
		}()
	}
	wg.Wait()
}
