package analyzer

import (
	"slices"
	"strings"

	"github.com/strata-db/strata/internal/errcode"
)

// synonymFilter replaces each token that has synonyms by its synonyms (in
// byte order), each with the token's offsets and position, as Milvus's
// synonym filter does. Rules are Milvus's rows: "a, b, c" makes the words
// synonyms of each other (with "expand": false, all map to the first),
// "a, b => c, d" maps a and b to c and d (and to themselves when expand).
// "\" escapes ",", " ", "\" and "=>".
type synonymFilter map[string][]string

func newSynonymFilter(p map[string]any) (filter, error) {
	if _, ok := p["synonyms_file"]; ok {
		return nil, errcode.Invalid("synonym filter synonyms_file is not supported: file resources are not available, list the rules in synonyms")
	}
	expand, err := boolParam(p, "expand", "create synonym filter failed,", true)
	if err != nil {
		return nil, err
	}
	sets := map[string]map[string]bool{}
	add := func(key string, words []string) {
		s, ok := sets[key]
		if !ok {
			s = map[string]bool{}
			if expand {
				s[key] = true
			}
			sets[key] = s
		}
		for _, w := range words {
			s[w] = true
		}
	}
	if v, ok := p["synonyms"]; ok {
		rows, err := stringList(v, "create synonym filter failed, synonyms")
		if err != nil {
			return nil, err
		}
		for _, row := range rows {
			left, right, mapping, err := parseSynonymRow(row)
			if err != nil {
				return nil, err
			}
			switch {
			case mapping:
				for _, k := range left {
					add(k, right)
				}
			case len(left) > 0:
				for _, k := range left {
					if expand {
						add(k, left)
					} else {
						add(k, left[:1])
					}
				}
			}
		}
	}
	out := synonymFilter{}
	for k, s := range sets {
		words := make([]string, 0, len(s))
		for w := range s {
			words = append(words, w)
		}
		slices.Sort(words)
		out[k] = words
	}
	return out, nil
}

// parseSynonymRow splits one rule into its left words, its right words and
// whether it is a mapping ("=>").
func parseSynonymRow(row string) (left, right []string, mapping bool, err error) {
	var cur strings.Builder
	spaced := false
	push := func() {
		if cur.Len() > 0 {
			if mapping {
				right = append(right, cur.String())
			} else {
				left = append(left, cur.String())
			}
		}
		cur.Reset()
		spaced = false
	}
	rs := []rune(row)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == '\\':
			switch {
			case i+1 >= len(rs):
				return nil, nil, false, errcode.Invalid("invalid synonym escaped in the end: %s", row)
			case rs[i+1] == ',' || rs[i+1] == '\\' || rs[i+1] == ' ':
				cur.WriteRune(rs[i+1])
				i++
			case rs[i+1] == '=' && i+2 < len(rs) && rs[i+2] == '>':
				cur.WriteString("=>")
				i += 2
			default:
				return nil, nil, false, errcode.Invalid("invalid synonym escaped: \\%c in %s", rs[i+1], row)
			}
		case c == ' ':
			if cur.Len() > 0 {
				spaced = true
			}
		case c == ',':
			push()
		case c == '=' && i+1 < len(rs) && rs[i+1] == '>':
			if mapping {
				return nil, nil, false, errcode.Invalid(`read synonym dict failed, has more than one "=>" in %s`, row)
			}
			push()
			mapping = true
			i++
		default:
			if spaced {
				return nil, nil, false, errcode.Invalid(`read synonym dict failed, has space between words %s, please use \ to escape space`, row)
			}
			cur.WriteRune(c)
		}
	}
	push()
	return left, right, mapping, nil
}

func (s synonymFilter) apply(toks []Token) []Token {
	return expandTokens(toks, func(t string) []string { return s[t] })
}
