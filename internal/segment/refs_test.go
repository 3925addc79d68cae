package segment

import (
	"errors"
	"sync"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
)

// TestHolders: the OnFree functions run once, when the last holder
// releases the segment, not before; a freed segment cannot be acquired or
// given more; releasing too often is an error.
func TestHolders(t *testing.T) {
	schema := &schemapb.CollectionSchema{Fields: []*schemapb.FieldSchema{
		{FieldID: 100, Name: "pk", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
	}}
	s, err := New(Info{ID: 7}, schema)
	require.NoError(t, err)
	freed := 0
	require.NoError(t, s.OnFree(func() error { freed++; return nil }))
	require.NoError(t, s.OnFree(func() error { return errors.New("unmap failed") }))

	var wg sync.WaitGroup
	for range 8 {
		require.True(t, s.Acquire())
		wg.Go(func() { require.NoError(t, s.Release()) })
	}
	wg.Wait()
	require.Zero(t, freed, "the owner still holds it")
	require.True(t, s.Acquire())
	require.NoError(t, s.Release(), "the owner's release leaves the reader's")
	require.Zero(t, freed)
	require.ErrorContains(t, s.Release(), "unmap failed", "the last release frees and reports")
	require.Equal(t, 1, freed)
	require.False(t, s.Acquire())
	require.ErrorIs(t, s.OnFree(func() error { return nil }), ErrFreed)
	require.Error(t, s.Release())
	require.Equal(t, 1, freed)
}
