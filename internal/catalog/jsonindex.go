package catalog

import (
	"errors"
	"strconv"
	"strings"
)

// The index parameters of a JSON-path index (Milvus 2.6). An index on a
// JSON field, or on a key of the dynamic field `$meta`, covers the value
// at JSONPathKey cast to JSONCastTypeKey. Params keep both as the user
// gave them (DescribeIndex returns them unchanged); comparisons between
// index definitions use their normal forms (JSONIndexParamsEqual).
const (
	JSONPathKey         = "json_path"
	JSONCastTypeKey     = "json_cast_type"
	JSONCastFunctionKey = "json_cast_function"
)

// DynamicFieldName is the name of the dynamic field that holds the keys a
// schema does not declare.
const DynamicFieldName = "$meta"

// JSONPath is a parsed json_path: an identifier (the JSON field, or a key
// of the dynamic field) followed by object keys and array indexes, as in
// `my_json['a'][0]["b"]`.
type JSONPath struct {
	// Root is the leading identifier.
	Root string
	// Keys are the bracketed steps after Root, array indexes as decimal text.
	Keys []string
}

// errJSONPath is returned for a json_path that is not identifier[step]...
var errJSONPath = errors.New("catalog: malformed json path")

// ParseJSONPath parses a json_path. Steps are quoted keys ('k' or "k",
// with backslash escapes) or non-negative integer indexes.
func ParseJSONPath(s string) (JSONPath, error) {
	i := 0
	for i < len(s) && s[i] != '[' {
		c := s[i]
		if !(c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return JSONPath{}, errJSONPath
		}
		i++
	}
	if i == 0 {
		return JSONPath{}, errJSONPath
	}
	p := JSONPath{Root: s[:i]}
	for i < len(s) {
		if s[i] != '[' || i+1 >= len(s) {
			return JSONPath{}, errJSONPath
		}
		i++
		switch q := s[i]; {
		case q == '\'' || q == '"':
			var b strings.Builder
			i++
			for i < len(s) && s[i] != q {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				b.WriteByte(s[i])
				i++
			}
			if i+1 >= len(s) || s[i+1] != ']' {
				return JSONPath{}, errJSONPath
			}
			p.Keys = append(p.Keys, b.String())
			i += 2
		default:
			j := strings.IndexByte(s[i:], ']')
			if j <= 0 {
				return JSONPath{}, errJSONPath
			}
			n, err := strconv.ParseUint(s[i:i+j], 10, 31)
			if err != nil {
				return JSONPath{}, errJSONPath
			}
			p.Keys = append(p.Keys, strconv.FormatUint(n, 10))
			i += j + 1
		}
	}
	return p, nil
}

// Steps returns the path inside the indexed field: Keys for a JSON field
// or for a path rooted at `$meta` itself, Root then Keys for a key of the
// dynamic field.
func (p JSONPath) Steps(dynamic bool) []string {
	if dynamic && p.Root != DynamicFieldName {
		return append([]string{p.Root}, p.Keys...)
	}
	return p.Keys
}

// Pointer returns steps as a JSON pointer ("/a/0/b", "" for the whole
// value), escaping '~' and '/' as RFC 6901 does.
func Pointer(steps []string) string {
	var b strings.Builder
	for _, s := range steps {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(s))
	}
	return b.String()
}

// JSONIndexTarget returns the normal form of a JSON-path index's path: the
// JSON pointer inside the field, and ok = false when params name no
// (parsable) json_path. dynamic tells whether the field is `$meta`.
func JSONIndexTarget(params map[string]string, dynamic bool) (pointer string, ok bool) {
	s, set := params[JSONPathKey]
	if !set {
		return "", false
	}
	p, err := ParseJSONPath(s)
	if err != nil {
		return "", false
	}
	return Pointer(p.Steps(dynamic)), true
}

// JSONIndexParamsEqual compares two index definitions as Milvus does for
// JSON-path indexes: json_cast_type ignoring case, json_path by the
// pointer it denotes, every other key (but the AlterIndex-managed ones)
// exactly.
func JSONIndexParamsEqual(a, b map[string]string, dynamic bool) bool {
	norm := func(m map[string]string) map[string]string {
		out := make(map[string]string, len(m))
		for k, v := range m {
			if IsConfigurableIndexParam(k) {
				continue
			}
			out[k] = v
		}
		if v, ok := out[JSONCastTypeKey]; ok {
			out[JSONCastTypeKey] = strings.ToUpper(v)
		}
		if v, ok := out[JSONCastFunctionKey]; ok {
			out[JSONCastFunctionKey] = strings.ToUpper(v)
		}
		if ptr, ok := JSONIndexTarget(m, dynamic); ok {
			out[JSONPathKey] = ptr
		}
		return out
	}
	x, y := norm(a), norm(b)
	if len(x) != len(y) {
		return false
	}
	for k, v := range x {
		if w, ok := y[k]; !ok || w != v {
			return false
		}
	}
	return true
}
