package index

import (
	"fmt"
	"strconv"
	"strings"
)

// IntParam reads the integer build parameter key from its string form in
// an index's parameters (a JSON string's quotes and blanks trimmed),
// refusing other values as Milvus words it: a number that is not an
// integer (16.0) is "wrong data type in json" (its index library's JSON
// check), anything else (True, [16], a JSON object) "invalid integer
// value" (Milvus's parameter check). Callers prefix their package.
func IntParam(key, v string) (int, error) {
	s := strings.Trim(v, `" `)
	n, err := strconv.Atoi(s)
	if err == nil {
		return n, nil
	}
	if _, ferr := strconv.ParseFloat(s, 64); ferr == nil {
		return 0, fmt.Errorf("param '%s' (%s) should be an integer: wrong data type in json", key, v)
	}
	return 0, fmt.Errorf("invalid integer value, key: '%s', value: '%s'", key, v)
}
