package health

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSetKeepsFirstSinceAndClears(t *testing.T) {
	var s Set
	require.Nil(t, s.Problems())
	first := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s.Report(Problem{Component: "wal", Subject: "b", Reason: "one", Since: first})
	s.Report(Problem{Component: "wal", Subject: "b", Reason: "two"})
	s.Report(Problem{Component: "wal", Subject: "a", Reason: "other"})
	got := s.Problems()
	require.Len(t, got, 2)
	require.Equal(t, "a", got[0].Subject)
	require.False(t, got[0].Since.IsZero())
	require.Equal(t, "two", got[1].Reason)
	require.Equal(t, first, got[1].Since)
	s.Clear("b")
	require.Len(t, s.Problems(), 1)
	all := Gather(&s, SourceFunc(func() []Problem { return []Problem{{Subject: "x"}} }), nil)
	require.Equal(t, []string{"a", "x"}, []string{all[0].Subject, all[1].Subject})
}
