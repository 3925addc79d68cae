package membership

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDiff(t *testing.T) {
	n := func(id int64, addr string) Node { return Node{ID: id, Role: "querynode", Address: addr, Revision: id} }
	live := map[int64]Node{1: n(1, "a"), 2: n(2, "b"), 3: n(3, "c"), 4: n(4, "d")}
	events := diff(live, []Node{n(2, "b"), n(3, "c2"), n(5, "e")}, 99)
	require.Equal(t, []Event{
		{Type: Updated, Node: n(3, "c2"), Revision: 99},
		{Type: Added, Node: n(5, "e"), Revision: 99},
		{Type: Removed, Node: n(1, "a"), Revision: 99},
		{Type: Removed, Node: n(4, "d"), Revision: 99},
	}, events)
	require.Equal(t, map[int64]Node{2: n(2, "b"), 3: n(3, "c2"), 5: n(5, "e")}, live)
	require.Empty(t, diff(live, []Node{n(2, "b"), n(3, "c2"), n(5, "e")}, 100))
}

func TestValidName(t *testing.T) {
	for name, ok := range map[string]bool{
		"querynode": true, "data_node-2": true, "": false, "Query": false, "a/b": false, "a b": false,
		"x123456789x123456789x123456789x123456789x123456789x123456789x1234": false,
	} {
		require.Equal(t, ok, validName(name), "%q", name)
	}
}
