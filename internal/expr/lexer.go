package expr

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// tokKind is the kind of a lexical token.
type tokKind uint8

const (
	tEOF tokKind = iota
	tInt
	tFloat
	tString // value already unescaped
	tIdent
	tMeta // $meta
	tTrue
	tFalse
	tLParen
	tRParen
	tLBrack
	tRBrack
	tLBrace
	tRBrace
	tComma
	tEq
	tNe
	tLt
	tLe
	tGt
	tGe
	tAdd
	tSub
	tMul
	tDiv
	tMod
	tPow
	tShl
	tShr
	tBAnd
	tBOr
	tBXor
	tBNot
	tAnd
	tOr
	tNot
	tIn
	tLike
	tIs
	tNull
	tExists
	tAssign // = of a named call argument (text_match's minimum_should_match=2)
)

func (k tokKind) String() string {
	return [...]string{
		tEOF: "end of expression", tInt: "integer", tFloat: "float", tString: "string",
		tIdent: "identifier", tMeta: "$meta", tTrue: "true", tFalse: "false",
		tLParen: "(", tRParen: ")", tLBrack: "[", tRBrack: "]", tLBrace: "{", tRBrace: "}",
		tComma: ",", tEq: "==", tNe: "!=", tLt: "<", tLe: "<=", tGt: ">", tGe: ">=",
		tAdd: "+", tSub: "-", tMul: "*", tDiv: "/", tMod: "%", tPow: "**", tShl: "<<",
		tShr: ">>", tBAnd: "&", tBOr: "|", tBXor: "^", tBNot: "~", tAnd: "and", tOr: "or",
		tNot: "not", tIn: "in", tLike: "like", tIs: "is", tNull: "null", tExists: "exists", tAssign: "=",
	}[k]
}

// token is one lexical token; text is the source slice (for literals and
// identifiers) and str the decoded string value of tString.
type token struct {
	kind tokKind
	pos  int
	text string
	str  string
}

// keywords maps the accepted spellings of every keyword.
func keyword(s string) (tokKind, bool) {
	switch s {
	case "and", "AND":
		return tAnd, true
	case "or", "OR":
		return tOr, true
	case "not", "NOT":
		return tNot, true
	case "in", "IN":
		return tIn, true
	case "like", "LIKE":
		return tLike, true
	case "is", "IS":
		return tIs, true
	case "null", "NULL":
		return tNull, true
	case "exists", "EXISTS":
		return tExists, true
	case "true", "True", "TRUE":
		return tTrue, true
	case "false", "False", "FALSE":
		return tFalse, true
	}
	return 0, false
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) }

// lex splits src into tokens, ending with tEOF.
func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for {
		for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
			i++
		}
		if i >= len(src) {
			toks = append(toks, token{kind: tEOF, pos: i})
			return toks, nil
		}
		start := i
		c := src[i]
		two := ""
		if i+1 < len(src) {
			two = src[i : i+2]
		}
		simple := func(k tokKind, n int) {
			toks = append(toks, token{kind: k, pos: start, text: src[start : start+n]})
			i += n
		}
		switch {
		case two == "==":
			simple(tEq, 2)
		case two == "!=":
			simple(tNe, 2)
		case two == "<=":
			simple(tLe, 2)
		case two == ">=":
			simple(tGe, 2)
		case two == "<<":
			simple(tShl, 2)
		case two == ">>":
			simple(tShr, 2)
		case two == "**":
			simple(tPow, 2)
		case two == "&&":
			simple(tAnd, 2)
		case two == "||":
			simple(tOr, 2)
		case two == "=~" || two == "!~":
			return nil, errAt(start, "regular expression match %s is not supported", two)
		case c == '<':
			simple(tLt, 1)
		case c == '>':
			simple(tGt, 1)
		case c == '!':
			simple(tNot, 1)
		case c == '(':
			simple(tLParen, 1)
		case c == ')':
			simple(tRParen, 1)
		case c == '[':
			simple(tLBrack, 1)
		case c == ']':
			simple(tRBrack, 1)
		case c == '{':
			simple(tLBrace, 1)
		case c == '}':
			simple(tRBrace, 1)
		case c == ',':
			simple(tComma, 1)
		case c == '+':
			simple(tAdd, 1)
		case c == '-':
			simple(tSub, 1)
		case c == '*':
			simple(tMul, 1)
		case c == '/':
			simple(tDiv, 1)
		case c == '%':
			simple(tMod, 1)
		case c == '&':
			simple(tBAnd, 1)
		case c == '|':
			simple(tBOr, 1)
		case c == '^':
			simple(tBXor, 1)
		case c == '~':
			simple(tBNot, 1)
		case c == '=' && namedArgPosition(toks):
			simple(tAssign, 1)
		case c == '=':
			return nil, errAt(start, "unexpected '=' (use == for equality)")
		case c == '"' || c == '\'':
			s, n, err := lexString(src, i, false)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tString, pos: start, text: src[start:n], str: s})
			i = n
		case (c == 'r' || c == 'R') && i+1 < len(src) && (src[i+1] == '"' || src[i+1] == '\''):
			s, n, err := lexString(src, i+1, true)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tString, pos: start, text: src[start:n], str: s})
			i = n
		case c == '$':
			if strings.HasPrefix(src[i:], "$meta") && (i+5 >= len(src) || !isIdentChar(src[i+5])) {
				simple(tMeta, 5)
			} else {
				return nil, errAt(start, "unexpected character '$'")
			}
		case isIdentStart(c):
			for i < len(src) && isIdentChar(src[i]) {
				i++
			}
			text := src[start:i]
			k, ok := keyword(text)
			if !ok {
				k = tIdent
			}
			toks = append(toks, token{kind: k, pos: start, text: text})
		case isDigit(c) || c == '.' && i+1 < len(src) && isDigit(src[i+1]):
			t, err := lexNumber(src, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i = t.pos + len(t.text)
		default:
			r, _ := utf8.DecodeRuneInString(src[i:])
			return nil, errAt(start, "unexpected character %q", r)
		}
	}
}

// lexNumber scans an integer or floating literal starting at i.
func lexNumber(src string, i int) (token, error) {
	start := i
	isHexDigit := func(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
	float := false
	if src[i] == '0' && i+1 < len(src) && (src[i+1] == 'x' || src[i+1] == 'X') {
		i += 2
		for i < len(src) && isHexDigit(src[i]) {
			i++
		}
		if i < len(src) && src[i] == '.' {
			float = true
			i++
			for i < len(src) && isHexDigit(src[i]) {
				i++
			}
		}
		if i < len(src) && (src[i] == 'p' || src[i] == 'P') {
			float = true
			i++
			if i < len(src) && (src[i] == '+' || src[i] == '-') {
				i++
			}
			for i < len(src) && isDigit(src[i]) {
				i++
			}
		}
	} else if src[i] == '0' && i+1 < len(src) && strings.IndexByte("bBoO", src[i+1]) >= 0 {
		i += 2
		for i < len(src) && isDigit(src[i]) {
			i++
		}
	} else {
		for i < len(src) && isDigit(src[i]) {
			i++
		}
		if i < len(src) && src[i] == '.' {
			float = true
			i++
			for i < len(src) && isDigit(src[i]) {
				i++
			}
		}
		if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
			float = true
			i++
			if i < len(src) && (src[i] == '+' || src[i] == '-') {
				i++
			}
			for i < len(src) && isDigit(src[i]) {
				i++
			}
		}
	}
	if i < len(src) && (isIdentChar(src[i]) || src[i] == '.') {
		return token{}, errAt(start, "malformed number %q", src[start:i+1])
	}
	text := src[start:i]
	if float {
		if _, err := strconv.ParseFloat(text, 64); err != nil {
			return token{}, errAt(start, "malformed number %q", text)
		}
		return token{kind: tFloat, pos: start, text: text}, nil
	}
	if _, err := parseIntLit(text); err != nil && !isRangeErr(err) {
		return token{}, errAt(start, "malformed number %q", text)
	}
	return token{kind: tInt, pos: start, text: text}, nil
}

func isRangeErr(err error) bool {
	return errors.Is(err, strconv.ErrRange)
}

// parseIntLit parses a decimal, 0x hex, 0b binary, 0o or leading-0 octal
// integer literal, optionally preceded by '-'.
func parseIntLit(text string) (int64, error) {
	if strings.IndexByte(text, '_') >= 0 {
		return 0, &strconv.NumError{Func: "ParseInt", Num: text, Err: strconv.ErrSyntax}
	}
	return strconv.ParseInt(text, 0, 64)
}

// lexString scans a quoted string whose opening quote is at q. Raw strings
// keep backslashes verbatim; a backslash only stops the closing quote.
// Cooked strings decode C escapes; an unknown escape such as \% keeps its
// backslash so LIKE patterns can use it.
func lexString(src string, q int, raw bool) (string, int, error) {
	quote := src[q]
	var b strings.Builder
	i := q + 1
	for {
		if i >= len(src) || src[i] == '\n' || src[i] == '\r' {
			return "", 0, errAt(q, "unterminated string literal")
		}
		c := src[i]
		if c == quote {
			return b.String(), i + 1, nil
		}
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(src) {
			return "", 0, errAt(q, "unterminated string literal")
		}
		e := src[i+1]
		if raw {
			b.WriteByte('\\')
			b.WriteByte(e)
			i += 2
			continue
		}
		i += 2
		switch e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case '\\':
			b.WriteByte('\\')
		case '"', '\'', '?':
			b.WriteByte(e)
		case 'u', 'U':
			n := 4
			if e == 'U' {
				n = 8
			}
			if i+n > len(src) {
				return "", 0, errAt(i-2, "invalid unicode escape")
			}
			v, err := strconv.ParseUint(src[i:i+n], 16, 32)
			if err != nil || !utf8.ValidRune(rune(v)) {
				return "", 0, errAt(i-2, "invalid unicode escape")
			}
			b.WriteRune(rune(v))
			i += n
		case 'x':
			j := i
			for j < len(src) && j < i+2 && strings.IndexByte("0123456789abcdefABCDEF", src[j]) >= 0 {
				j++
			}
			if j == i {
				return "", 0, errAt(i-2, "invalid hex escape")
			}
			v, _ := strconv.ParseUint(src[i:j], 16, 8)
			b.WriteByte(byte(v))
			i = j
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i - 1
			for j < len(src) && j < i+2 && src[j] >= '0' && src[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(src[i-1:j], 8, 16)
			if v > 255 {
				return "", 0, errAt(i-2, "octal escape out of range")
			}
			b.WriteByte(byte(v))
			i = j
		case '\n', '\r':
			// line continuation
			if e == '\r' && i < len(src) && src[i] == '\n' {
				i++
			}
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
}
