package wal

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// truncations is a Truncater that records the last truncation of each
// pchannel (the local Pins under RemotePins pass the same call on to the
// log; its own behaviour is TestPinsHoldTruncation's).
type truncations map[string]int64

func (t truncations) Truncate(_ context.Context, pchannel string, before int64) error {
	t[pchannel] = before
	return nil
}

// TestRemotePins: truncation behind the checkpoints stops at the lowest
// pin a live remote node reported for the pchannel; a node that is behind
// holds the pchannel where it is; nothing is truncated while the live set
// is unknown or a live node has not reported; a node whose session ended
// pins nothing; a read of a replay's start holds the pchannel until the
// grace period after it ends.
func TestRemotePins(t *testing.T) {
	ctx := context.Background()
	log := truncations{}
	now := time.Unix(1000, 0)
	p := NewRemotePins(NewPins(log), 10*time.Second)
	p.now = func() time.Time { return now }

	require.NoError(t, p.Truncate(ctx, "p0", 100))
	require.Empty(t, log, "the live set is not known yet")
	p.SetLive([]int64{1, 2})
	require.NoError(t, p.Truncate(ctx, "p0", 100))
	require.Empty(t, log, "live nodes that have not reported")
	p.Report(1, map[string]int64{"p0": 40, "p1": 7})
	require.NoError(t, p.Truncate(ctx, "p0", 100))
	require.Empty(t, log, "node 2 has not reported")
	p.Report(2, map[string]int64{})
	require.NoError(t, p.Truncate(ctx, "p0", 100))
	require.Equal(t, int64(40), log["p0"], "node 1 is behind: held at its pin")
	require.NoError(t, p.Truncate(ctx, "p2", 100))
	require.Equal(t, int64(100), log["p2"], "nobody reads p2")

	// Node 1 moves on; node 3 joins and blocks everything until it reports.
	p.Report(1, map[string]int64{"p0": 90})
	p.NodeJoined(3)
	require.NoError(t, p.Truncate(ctx, "p0", 100))
	require.Equal(t, int64(40), log["p0"], "node 3 has not reported")
	p.Report(3, map[string]int64{"p0": 95})
	require.NoError(t, p.Truncate(ctx, "p0", 100))
	require.Equal(t, int64(90), log["p0"])

	// Node 1 dies: its pins go; a report it sent late is ignored.
	p.NodeLeft(1)
	p.Report(1, map[string]int64{"p0": 0})
	require.NoError(t, p.Truncate(ctx, "p0", 100))
	require.Equal(t, int64(95), log["p0"])

	// A replay's start read: held from the Hold (everything) and then at
	// the start for the grace period, until the node's report covers it.
	id := p.Hold("p1")
	f, ok := p.Floor("p1", 50)
	require.True(t, ok)
	require.Zero(t, f, "held whole while the start is read")
	p.HoldAt(id, 20)
	f, _ = p.Floor("p1", 50)
	require.Equal(t, int64(20), f)
	now = now.Add(9 * time.Second)
	f, _ = p.Floor("p1", 50)
	require.Equal(t, int64(20), f, "within the grace period")
	now = now.Add(2 * time.Second)
	f, _ = p.Floor("p1", 50)
	require.Equal(t, int64(50), f, "the hold expired")

	// A new live set (a watch resumed) drops the reports of nodes gone.
	p.SetLive([]int64{2})
	f, ok = p.Floor("p0", 100)
	require.True(t, ok)
	require.Equal(t, int64(100), f, "node 3 is gone")

	// In-process pins still count (the wrapped Pins).
	local := NewPins(log)
	rp := NewRemotePins(local, time.Second)
	rp.SetLive(nil)
	pin := local.Pin("p0", 10)
	require.NoError(t, rp.Truncate(ctx, "p0", 100))
	require.Equal(t, int64(10), log["p0"])
	local.Release(pin)
	require.Equal(t, map[string]int64{}, local.Floors())
}
