package expr

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNullLiteral: "null is null" is true and "null is not null" false, in
// any combination; null anywhere else is refused, never a panic.
func TestNullLiteral(t *testing.T) {
	runEval(t, []evalCase{
		{"null is null", all()},
		{"NULL is not null", rows()},
		{"id < 2 or null is null", all()},
		{"id < 2 and null is not null", rows()},
		{"(id < 2 or null is not null) and id > 0", rows(1)},
	}, testSchema(true), nil)
	for _, bad := range []string{"null", "id == null", "null == 1", "null + 1 > 0", "null < id"} {
		_, err := Compile(bad, testSchema(true), nil)
		require.Error(t, err, bad)
	}
}
