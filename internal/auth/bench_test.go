package auth

import (
	"context"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/stretchr/testify/require"
)

// BenchmarkGuardCheck is the per-request cost of authorization: a cached
// password check plus the privilege lookup of a Search ("off" is the
// disabled guard, what every request costs with authorization off).
func BenchmarkGuardCheck(b *testing.B) {
	s := withUserRole(b, newStore(b))
	require.NoError(b, s.OperateGrant(context.Background(), Grant{Role: "r1", ObjectType: ObjectCollection, ObjectName: "c1", DB: "default", Privilege: "Search"}, true))
	req := &milvuspb.SearchRequest{CollectionName: "c1"}
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		g := NewGuard(s, on)
		ctx := ctxAs("u1", "password")
		_, err := g.Check(ctx, "Search", req) // fills the password cache
		require.NoError(b, err)
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := g.Check(ctx, "Search", req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
