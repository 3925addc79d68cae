package expr

import (
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// This file holds a small allocation-light JSON reader used by the filter
// operators: it finds the value at a path inside a raw document without
// decoding the rest, and classifies or decodes just that value.

// maxJSONDepth bounds nesting while decoding JSON values.
const maxJSONDepth = 512

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string whose opening quote is at i,
// and whether it contains escapes.
func skipString(b []byte, i int) (int, bool, bool) {
	esc := false
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			esc = true
			j++
		case '"':
			return j + 1, esc, true
		}
	}
	return 0, false, false
}

// skipValue returns the index just after the value that starts at i.
func skipValue(b []byte, i int) (int, bool) {
	i = skipWS(b, i)
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; {
	case c == '"':
		j, _, ok := skipString(b, i)
		return j, ok
	case c == '{' || c == '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			case '"':
				k, _, ok := skipString(b, j)
				if !ok {
					return 0, false
				}
				j = k - 1
			}
		}
		return 0, false
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' &&
			b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
			j++
		}
		if j == i {
			return 0, false
		}
		return j, true
	}
}

// jsonLookup returns the raw bytes of the value at path in doc.
func jsonLookup(doc []byte, path []pathStep) ([]byte, bool) {
	i := skipWS(doc, 0)
	for _, st := range path {
		if i >= len(doc) {
			return nil, false
		}
		if st.isKey {
			if doc[i] != '{' {
				return nil, false
			}
			i = skipWS(doc, i+1)
			found := false
			for i < len(doc) && doc[i] != '}' {
				if doc[i] != '"' {
					return nil, false
				}
				end, esc, ok := skipString(doc, i)
				if !ok {
					return nil, false
				}
				var match bool
				if esc {
					k, ok := decodeString(doc[i:end])
					match = ok && k == st.key
				} else {
					match = string(doc[i+1:end-1]) == st.key
				}
				i = skipWS(doc, end)
				if i >= len(doc) || doc[i] != ':' {
					return nil, false
				}
				i = skipWS(doc, i+1)
				if match {
					found = true
					break
				}
				j, ok := skipValue(doc, i)
				if !ok {
					return nil, false
				}
				i = skipWS(doc, j)
				if i < len(doc) && doc[i] == ',' {
					i = skipWS(doc, i+1)
				}
			}
			if !found {
				return nil, false
			}
			continue
		}
		if doc[i] != '[' {
			return nil, false
		}
		i = skipWS(doc, i+1)
		for n := int64(0); ; n++ {
			if i >= len(doc) || doc[i] == ']' {
				return nil, false
			}
			if n == st.index {
				break
			}
			j, ok := skipValue(doc, i)
			if !ok {
				return nil, false
			}
			i = skipWS(doc, j)
			if i < len(doc) && doc[i] == ',' {
				i = skipWS(doc, i+1)
			}
		}
	}
	j, ok := skipValue(doc, i)
	if !ok {
		return nil, false
	}
	return doc[i:j], true
}

// jsonElems calls fn for the raw bytes of each element of the JSON array raw;
// it reports false when raw is not an array. fn returns false to stop.
func jsonElems(raw []byte, fn func(elem []byte) bool) bool {
	if len(raw) == 0 || raw[0] != '[' {
		return false
	}
	i := skipWS(raw, 1)
	for i < len(raw) && raw[i] != ']' {
		j, ok := skipValue(raw, i)
		if !ok {
			return false
		}
		if !fn(raw[i:j]) {
			return true
		}
		i = skipWS(raw, j)
		if i < len(raw) && raw[i] == ',' {
			i = skipWS(raw, i+1)
		}
	}
	return true
}

// jsonKind classifies a raw JSON value by its first byte.
func jsonKind(raw []byte) valKind {
	if len(raw) == 0 {
		return vkNull
	}
	switch raw[0] {
	case '"':
		return vkString
	case 't', 'f':
		return vkBool
	case 'n':
		return vkNull
	case '[':
		return vkList
	case '{':
		return vkObject
	}
	for _, c := range raw {
		if c == '.' || c == 'e' || c == 'E' {
			return vkFloat
		}
	}
	return vkInt
}

// jsonInt parses a raw JSON integer without allocating.
func jsonInt(raw []byte) (int64, bool) {
	neg := false
	i := 0
	if len(raw) > 0 && raw[0] == '-' {
		neg, i = true, 1
	}
	if i >= len(raw) {
		return 0, false
	}
	var u uint64
	for ; i < len(raw); i++ {
		c := raw[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if u > (math.MaxUint64-9)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// jsonNumber decodes a raw JSON number as an int or a float value.
func jsonNumber(raw []byte) (value, bool) {
	if jsonKind(raw) == vkInt {
		if n, ok := jsonInt(raw); ok {
			return intVal(n), true
		}
	}
	if len(raw) == 0 || !(raw[0] == '-' || isDigit(raw[0])) {
		return value{}, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil && !isRangeErr(err) {
		return value{}, false
	}
	return floatVal(f), true
}

// jsonStringBytes returns the content of a raw JSON string; when it has no
// escapes the result aliases raw, otherwise it is decoded.
func jsonStringBytes(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	inner := raw[1 : len(raw)-1]
	for _, c := range inner {
		if c == '\\' {
			s, ok := decodeString(raw)
			return []byte(s), ok
		}
	}
	return inner, true
}

// decodeString decodes a quoted JSON string with escapes.
func decodeString(raw []byte) (string, bool) {
	if len(raw) < 2 {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	out := make([]byte, 0, len(inner))
	for i := 0; i < len(inner); i++ {
		c := inner[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(inner) {
			return "", false
		}
		switch inner[i] {
		case '"', '\\', '/':
			out = append(out, inner[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, n, ok := hex4(inner, i+1)
			if !ok {
				return "", false
			}
			i += n
			if utf16.IsSurrogate(r) {
				if r2, n2, ok := hex4(inner, i+3); ok && i+2 < len(inner) && inner[i+1] == '\\' && inner[i+2] == 'u' {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						r = d
						i += n2 + 2
					}
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	return string(out), true
}

func hex4(b []byte, i int) (rune, int, bool) {
	if i+4 > len(b) {
		return 0, 0, false
	}
	v, err := strconv.ParseUint(string(b[i:i+4]), 16, 32)
	if err != nil {
		return 0, 0, false
	}
	return rune(v), 4, true
}

// decodeJSON decodes a whole JSON document into a value.
func decodeJSON(raw []byte) (value, bool) {
	raw = trimWS(raw)
	return decodeValue(raw, 0)
}

func trimWS(b []byte) []byte {
	i := skipWS(b, 0)
	j := len(b)
	for j > i && (b[j-1] == ' ' || b[j-1] == '\t' || b[j-1] == '\n' || b[j-1] == '\r') {
		j--
	}
	return b[i:j]
}

// decodeValue decodes one raw value (objects decode to an opaque vkObject).
func decodeValue(raw []byte, depth int) (value, bool) {
	if depth > maxJSONDepth {
		return value{}, false
	}
	switch jsonKind(raw) {
	case vkString:
		s, ok := jsonStringBytes(raw)
		return strVal(string(s)), ok
	case vkBool:
		switch string(raw) {
		case "true":
			return boolVal(true), true
		case "false":
			return boolVal(false), true
		}
		return value{}, false
	case vkNull:
		return value{}, string(raw) == "null"
	case vkObject:
		return value{k: vkObject}, true
	case vkList:
		l := []value{}
		ok := true
		jsonElems(raw, func(e []byte) bool {
			v, good := decodeValue(e, depth+1)
			if !good {
				ok = false
				return false
			}
			l = append(l, v)
			return true
		})
		return listVal(l), ok
	}
	return jsonNumber(raw)
}
