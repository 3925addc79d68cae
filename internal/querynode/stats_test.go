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
	require.Zero(t, s.QueryNode.LoadProgress(s.CollectionID))
	require.Empty(t, s.QueryNode.ServiceTimes())
	require.NoError(t, s.QueryNode.Load(context.Background(), s.CollectionID, nil, 0, nil))
	require.EqualValues(t, 100, s.QueryNode.LoadProgress(s.CollectionID))
	require.NotEmpty(t, s.QueryNode.ServiceTimes())
	s.QueryNode.Release(s.CollectionID)
	require.Zero(t, s.QueryNode.LoadProgress(s.CollectionID))
}
