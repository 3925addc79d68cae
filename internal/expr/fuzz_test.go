package expr

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzCompile checks that Compile never panics, and that Eval of anything
// that compiles never panics and returns one result per row.
func FuzzCompile(f *testing.F) {
	seeds := []string{
		"", "id == 3", "id in [1, 2, 3]", `s like "ab%"`, `s like "a_%\%"`, "1 < id <= 5",
		`meta["a"]["b"][0] > 1.5`, `age > 10 and name == "x"`, "n is not null", "(id & 4) == 4",
		"array_contains_all(ai, [1, 2])", `json_contains_any(meta["arr"], [1, "a"])`,
		"array_length(ai) > 1", "exists meta[\"k\"]", "id * 2 + i32 % 3 ** 2 > f", "{x} < id < {hi}",
		"not (b or id == 0x1F) && s != r'q\\'", "-9223372036854775808 == id", "~id << 2 >= -0b11",
		"id / (3 - 1) == 2", `$meta["tags"][1] in ["t2"]`, "ai[2] == 3", "(((", "id in [", "\"\\u00",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	schema := testSchema(true)
	tmpl := tmplVals()
	b := testBatch()
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Compile(src, schema, tmpl)
		if err != nil {
			var ce *Error
			require.ErrorAs(t, err, &ce)
			require.GreaterOrEqual(t, ce.Pos, 0)
			require.LessOrEqual(t, ce.Pos, len(src))
			return
		}
		got, err := e.Eval(b)
		require.NoError(t, err)
		require.Len(t, got, b.Len())
		_ = e.String()
		_ = e.Fields()
		_, _ = e.PKValues()
	})
}
