package analyzer

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// asciiFolding rewrites letters, digits and symbols outside ASCII to their
// ASCII equivalents where one exists ("café" → "cafe", "Straße" →
// "Strasse"), like Lucene's ASCIIFoldingFilter that tantivy and Milvus use:
// accents are stripped by canonical decomposition, and letters without a
// decomposition (ß, æ, ø, ł, ...) are mapped by a table. Characters with no
// ASCII form stay as they are.
type asciiFolding struct{}

func (asciiFolding) apply(toks []Token) []Token {
	for i := range toks {
		toks[i].Text = foldASCII(toks[i].Text)
	}
	return toks
}

// foldSpecial maps the letters whose ASCII form is not their decomposition.
var foldSpecial = map[rune]string{
	'ß': "ss", 'ẞ': "SS", 'æ': "ae", 'Æ': "AE", 'œ': "oe", 'Œ': "OE", 'ø': "o", 'Ø': "O",
	'đ': "d", 'Đ': "D", 'ð': "d", 'Ð': "D", 'ł': "l", 'Ł': "L", 'þ': "th", 'Þ': "TH",
	'ı': "i", 'ħ': "h", 'Ħ': "H", 'ŧ': "t", 'Ŧ': "T", 'ĸ': "q", 'ŀ': "l", 'Ŀ': "L",
	'ŉ': "'n", 'ſ': "s", 'ƒ': "f", 'ĳ': "ij", 'Ĳ': "IJ", 'ŋ': "n", 'Ŋ': "N",
	'‘': "'", '’': "'", '‚': "'", '‛': "'", '“': "\"", '”': "\"", '„': "\"", '«': "\"", '»': "\"",
	'–': "-", '—': "-", '‐': "-", '‑': "-", '‒': "-", '−': "-", '…': "...",
}

func foldASCII(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf {
			b.WriteRune(r)
			continue
		}
		if m, ok := foldSpecial[r]; ok {
			b.WriteString(m)
			continue
		}
		d := norm.NFKD.String(string(r))
		base := strings.Map(func(c rune) rune {
			if unicode.Is(unicode.Mn, c) {
				return -1
			}
			return c
		}, d)
		if base != "" && isASCII(base) {
			b.WriteString(base)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
