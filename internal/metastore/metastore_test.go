package metastore_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/strata-db/strata/internal/metastore"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestOps(t *testing.T) {
	tests := []struct {
		op    metastore.Op
		kind  metastore.OpKind
		guard bool
		str   string
	}{
		{op: metastore.Put("k", []byte("v")), kind: metastore.OpPut, str: `put("k")`},
		{op: metastore.Delete("k"), kind: metastore.OpDelete, str: `delete("k")`},
		{op: metastore.DeletePrefix("k/"), kind: metastore.OpDeletePrefix, str: `delete-prefix("k/")`},
		{op: metastore.IfAbsent("k"), kind: metastore.OpIfAbsent, guard: true, str: `if-absent("k")`},
		{op: metastore.IfEquals("k", []byte("v")), kind: metastore.OpIfEquals, guard: true, str: `if-equals("k")`},
	}
	for _, tc := range tests {
		t.Run(tc.str, func(t *testing.T) {
			require.Equal(t, tc.kind, tc.op.Kind())
			require.Equal(t, tc.guard, tc.op.IsGuard())
			require.Equal(t, tc.str, tc.op.String())
		})
	}
}

func TestValidateOps(t *testing.T) {
	tests := []struct {
		name string
		ops  []metastore.Op
		ok   bool
	}{
		{name: "empty", ok: true},
		{name: "disjoint", ops: []metastore.Op{metastore.Put("a", nil), metastore.Delete("b"), metastore.DeletePrefix("c/")}, ok: true},
		{name: "guard and put same key", ops: []metastore.Op{metastore.IfAbsent("a"), metastore.Put("a", nil)}, ok: true},
		{name: "overlapping prefixes", ops: []metastore.Op{metastore.DeletePrefix("a"), metastore.DeletePrefix("a/")}, ok: true},
		{name: "sibling not under prefix", ops: []metastore.Op{metastore.DeletePrefix("a/1/"), metastore.Put("a/10", nil)}, ok: true},
		{name: "empty key", ops: []metastore.Op{metastore.Put("", nil)}},
		{name: "zero op", ops: []metastore.Op{{}}},
		{name: "duplicate", ops: []metastore.Op{metastore.Delete("a"), metastore.Delete("a")}},
		{name: "under prefix", ops: []metastore.Op{metastore.Put("a/1/x", nil), metastore.DeletePrefix("a/1/")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := metastore.ValidateOps(tc.ops)
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, metastore.ErrInvalidTxn)
			}
		})
	}
}
