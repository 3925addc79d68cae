package highlight

import (
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/strata-db/strata/internal/analyzer"
)

// Terms is a set of analyzed tokens to highlight.
type Terms map[string]struct{}

// TermsOf collects the token texts of some analyzed texts.
func TermsOf(tokens ...[]analyzer.Token) Terms {
	t := Terms{}
	for _, ts := range tokens {
		for _, tk := range ts {
			t[tk.Text] = struct{}{}
		}
	}
	return t
}

// Union returns a set holding the terms of t and u (either may be nil).
func (t Terms) Union(u Terms) Terms {
	out := make(Terms, len(t)+len(u))
	for k := range t {
		out[k] = struct{}{}
	}
	for k := range u {
		out[k] = struct{}{}
	}
	return out
}

// span is a highlighted range [start, end), in bytes or runes.
type span struct{ start, end int }

// fragment is a piece [start, end) of the text, in runes, with its matches.
type fragment struct {
	start, end int
	matches    []span
}

// Fragments returns the highlighted fragments of text, whose analyzer
// tokens are tokens, for the matches of terms (see the package comment).
// A text without matches has no fragments.
func (c *Config) Fragments(text string, tokens []analyzer.Token, terms Terms) []string {
	frags := c.cut(utf8.RuneCountInString(text), runeSpans(text, matchSpans(text, tokens, terms)))
	if len(frags) == 0 {
		return []string{}
	}
	runes := []rune(text)
	out := make([]string, 0, len(frags))
	for _, f := range frags {
		var b strings.Builder
		cur := f.start
		for i, m := range f.matches {
			b.WriteString(string(runes[cur:m.start]))
			b.WriteString(tag(c.PreTags, i))
			b.WriteString(string(runes[m.start:m.end]))
			b.WriteString(tag(c.PostTags, i))
			cur = m.end
		}
		b.WriteString(string(runes[cur:f.end]))
		out = append(out, b.String())
	}
	return out
}

// tag returns the tag of the i-th match of a fragment ("" without tags,
// which Parse never gives).
func tag(tags []string, i int) string {
	if len(tags) == 0 {
		return ""
	}
	return tags[i%len(tags)]
}

// matchSpans returns the byte ranges of the tokens in terms, sorted, with
// touching or overlapping ranges merged and ranges inside another dropped.
func matchSpans(text string, tokens []analyzer.Token, terms Terms) []span {
	var raw []span
	for _, tk := range tokens {
		if _, ok := terms[tk.Text]; !ok {
			continue
		}
		s, e := min(max(tk.Start, 0), len(text)), min(max(tk.End, 0), len(text))
		if s < e {
			raw = append(raw, span{s, e})
		}
	}
	slices.SortFunc(raw, func(a, b span) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return a.end - b.end
	})
	var out []span
	for _, s := range raw {
		if n := len(out); n > 0 && s.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, s.end)
			continue
		}
		out = append(out, s)
	}
	return out
}

// runeSpans turns byte ranges into rune ranges. An offset inside a
// multi-byte character counts as the character's end (analyzers give
// character boundaries; this only keeps a bad offset from panicking).
func runeSpans(text string, spans []span) []span {
	if len(spans) == 0 {
		return nil
	}
	starts := make([]int, 0, len(text))
	for i := range text {
		starts = append(starts, i)
	}
	idx := func(off int) int { return sort.SearchInts(starts, off) }
	out := make([]span, 0, len(spans))
	for _, s := range spans {
		r := span{idx(s.start), idx(s.end)}
		if n := len(out); n > 0 && r.start < out[n-1].end {
			r.start = out[n-1].end
		}
		if r.start < r.end {
			out = append(out, r)
		}
	}
	return out
}

// cut groups the rune spans of a text of n runes into fragments.
func (c *Config) cut(n int, spans []span) []fragment {
	var out []fragment
	var cur *fragment
	for _, s := range spans {
		if cur != nil && s.start <= cur.end {
			cur.matches = append(cur.matches, s)
			cur.end = max(cur.end, s.end)
			continue
		}
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
		if len(out) >= c.NumOfFragments {
			break
		}
		start := max(0, s.start-c.FragmentOffset)
		cur = &fragment{start: start, end: min(max(s.end, start+min(c.FragmentSize, n)), n), matches: []span{s}}
	}
	if cur != nil {
		out = append(out, *cur)
	}
	return out
}
