package expr

import (
	"regexp"
	"strings"
)

// likeKind is the strategy chosen for a LIKE pattern.
type likeKind uint8

const (
	likeExact likeKind = iota
	likePrefix
	likeSuffix
	likeInfix
	likeRegexp
)

// matcher tests strings against a LIKE pattern: % matches any run of
// characters, _ exactly one character, and a backslash makes the next
// character literal (\% \_ \\).
type matcher struct {
	pattern string
	kind    likeKind
	lit     string
	re      *regexp.Regexp
}

// likeTok is one element of a parsed pattern.
type likeTok struct {
	wild byte // '%', '_' or 0 for a literal
	lit  string
}

func parseLike(pat string) []likeTok {
	var toks []likeTok
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			toks = append(toks, likeTok{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch {
		case c == '\\' && i+1 < len(pat):
			i++
			lit.WriteByte(pat[i])
		case c == '%' || c == '_':
			flush()
			if c == '%' && len(toks) > 0 && toks[len(toks)-1].wild == '%' {
				continue // %% is %
			}
			toks = append(toks, likeTok{wild: c})
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	return toks
}

// newMatcher compiles pat, choosing a plain string test when the pattern is
// an exact, prefix, suffix or infix match.
func newMatcher(pat string) (*matcher, error) {
	m := &matcher{pattern: pat}
	toks := parseLike(pat)
	isLit := func(t likeTok) bool { return t.wild == 0 }
	isPct := func(t likeTok) bool { return t.wild == '%' }
	switch {
	case len(toks) == 0:
		m.kind = likeExact
		return m, nil
	case len(toks) == 1 && isLit(toks[0]):
		m.kind, m.lit = likeExact, toks[0].lit
		return m, nil
	case len(toks) == 1 && isPct(toks[0]):
		m.kind = likePrefix
		return m, nil
	case len(toks) == 2 && isLit(toks[0]) && isPct(toks[1]):
		m.kind, m.lit = likePrefix, toks[0].lit
		return m, nil
	case len(toks) == 2 && isPct(toks[0]) && isLit(toks[1]):
		m.kind, m.lit = likeSuffix, toks[1].lit
		return m, nil
	case len(toks) == 3 && isPct(toks[0]) && isLit(toks[1]) && isPct(toks[2]):
		m.kind, m.lit = likeInfix, toks[1].lit
		return m, nil
	}
	var b strings.Builder
	b.WriteString(`(?s)\A`)
	for _, t := range toks {
		switch t.wild {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(t.lit))
		}
	}
	b.WriteString(`\z`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, err
	}
	m.kind, m.re = likeRegexp, re
	return m, nil
}

func (m *matcher) match(s string) bool {
	switch m.kind {
	case likeExact:
		return s == m.lit
	case likePrefix:
		return strings.HasPrefix(s, m.lit)
	case likeSuffix:
		return strings.HasSuffix(s, m.lit)
	case likeInfix:
		return strings.Contains(s, m.lit)
	}
	return m.re.MatchString(s)
}

// matchAll matches every string, with the strategy switch outside the loop.
func (m *matcher) matchAll(xs []string, out []bool) {
	lit := m.lit
	switch m.kind {
	case likeExact:
		for i, s := range xs {
			out[i] = s == lit
		}
	case likePrefix:
		if lit == "" {
			fill(out[:len(xs)], true)
			return
		}
		c0 := lit[0]
		for i, s := range xs {
			out[i] = len(s) >= len(lit) && s[0] == c0 && s[:len(lit)] == lit
		}
	case likeSuffix:
		for i, s := range xs {
			out[i] = strings.HasSuffix(s, lit)
		}
	case likeInfix:
		for i, s := range xs {
			out[i] = strings.Contains(s, lit)
		}
	default:
		for i, s := range xs {
			out[i] = m.re.MatchString(s)
		}
	}
}
