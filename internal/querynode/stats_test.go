package querynode_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/stacktest"
)

// LoadProgress is 0 before a load and 100 once the load has replayed the
// WAL; ServiceTimes then names every served vchannel.
func TestLoadProgress(t *testing.T) {
	s := stacktest.New(t)
	s.Insert(0, 100)
	require.Zero(t, progress(t, s))
	require.Empty(t, s.QueryNode.ServiceTimes())
	require.NoError(t, s.QueryNode.Load(context.Background(), s.CollectionID, nil, 0, nil))
	require.EqualValues(t, 100, progress(t, s))
	require.NotEmpty(t, s.QueryNode.ServiceTimes())
	s.QueryNode.Release(s.CollectionID)
	require.Zero(t, progress(t, s))
}

// progress is the node's LoadProgress of the stack's collection.
func progress(t *testing.T, s *stacktest.Stack) int64 {
	t.Helper()
	pct, err := s.QueryNode.LoadProgress(context.Background(), s.CollectionID)
	require.NoError(t, err)
	return pct
}
