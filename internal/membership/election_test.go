package membership_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/enginetest"
	"github.com/strata-db/strata/internal/membership"
)

const coordinator = "coordinator"

type campaignResult struct {
	term membership.Term
	err  error
}

// campaign starts a Campaign in a goroutine; the result arrives on the
// returned channel.
func campaign(ctx context.Context, e *membership.Election) <-chan campaignResult {
	out := make(chan campaignResult, 1)
	go func() {
		term, err := e.Campaign(ctx)
		out <- campaignResult{term, err}
	}()
	return out
}

// await receives a campaign's result, failing the test after eventually.
func await(t *testing.T, ch <-chan campaignResult) campaignResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(eventually):
		t.Fatal("campaign did not end")
	}
	return campaignResult{}
}

// observe follows the election's terms until the test ends.
func observe(t *testing.T, r *membership.Registry) <-chan membership.Term {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := r.Observe(ctx, coordinator)
	require.NoError(t, err)
	t.Cleanup(func() {
		cancel()
		for range ch { // drain until the goroutine exits
		}
	})
	return ch
}

// nextLeader returns the next observed term with a leader, skipping
// leaderless ones.
func nextLeader(t *testing.T, ch <-chan membership.Term) membership.Term {
	t.Helper()
	deadline := time.After(eventually)
	for {
		select {
		case term := <-ch:
			if term.Revision != 0 {
				return term
			}
		case <-deadline:
			t.Fatal("no leader observed")
		}
	}
}

func election(t *testing.T, m *membership.Member) *membership.Election {
	t.Helper()
	e, err := m.Election(coordinator)
	require.NoError(t, err)
	return e
}

func TestElectionStandbyTakesOverWhenLeaderDies(t *testing.T) {
	ctx := context.Background()
	endpoint := enginetest.Etcd(t)
	watcher := open(t, endpoint, "t/", 2*time.Second)
	terms := observe(t, watcher)
	_, err := watcher.Leader(ctx, coordinator)
	require.ErrorIs(t, err, membership.ErrNoLeader)

	// The active coordinator runs in its own process (registry).
	activeProc, kill := openKillable(t, endpoint, "t/", 2*time.Second)
	active, err := activeProc.Register(ctx, membership.RoleCoordinator, "active")
	require.NoError(t, err)
	first, err := election(t, active).Campaign(ctx)
	require.NoError(t, err)
	require.Equal(t, active.Node(), first.Leader)
	require.Equal(t, first, nextLeader(t, terms))

	standby := register(t, open(t, endpoint, "t/", 2*time.Second), membership.RoleCoordinator, "standby")
	standbyWon := campaign(ctx, election(t, standby))

	// The standby waits while the leader lives.
	select {
	case r := <-standbyWon:
		t.Fatalf("standby led while the leader lived: %+v", r)
	case <-time.After(500 * time.Millisecond):
	}
	leader, err := watcher.Leader(ctx, coordinator)
	require.NoError(t, err)
	require.Equal(t, first, leader)

	// kill -9 the leader: its lease expires within a TTL or so.
	kill()
	require.NoError(t, active.Close())

	r := await(t, standbyWon)
	require.NoError(t, r.err)
	require.Equal(t, standby.Node(), r.term.Leader)
	require.Greater(t, r.term.Revision, first.Revision, "the fencing revision grows with each term")
	require.Equal(t, r.term, nextLeader(t, terms), "observers see the terms in order")
	leader, err = watcher.Leader(ctx, coordinator)
	require.NoError(t, err)
	require.Equal(t, r.term, leader)
}

func TestElectionCleanHandover(t *testing.T) {
	ctx := context.Background()
	endpoint := enginetest.Etcd(t)
	// A TTL far longer than the wait below: only a clean resign can hand
	// over in time.
	const ttl = 5 * time.Minute
	r := open(t, endpoint, "t/", ttl)
	terms := observe(t, r)

	a, b := register(t, r, membership.RoleCoordinator, "a"), register(t, r, membership.RoleCoordinator, "b")
	ea, eb := election(t, a), election(t, b)
	first, err := ea.Campaign(ctx)
	require.NoError(t, err)
	require.Equal(t, a.ID(), nextLeader(t, terms).Leader.ID)
	bWon := campaign(ctx, eb)

	// Resign hands over at once.
	require.NoError(t, ea.Resign(ctx))
	rb := await(t, bWon)
	require.NoError(t, rb.err)
	require.Equal(t, b.ID(), rb.term.Leader.ID)
	require.Greater(t, rb.term.Revision, first.Revision)
	require.Equal(t, rb.term, nextLeader(t, terms))

	// a stands again; b leaves (Member.Close revokes its lease) and a leads.
	aWon := campaign(ctx, ea)
	require.NoError(t, b.Close())
	ra := await(t, aWon)
	require.NoError(t, ra.err)
	require.Equal(t, a.ID(), ra.term.Leader.ID)
	require.Greater(t, ra.term.Revision, rb.term.Revision)
	require.Equal(t, ra.term, nextLeader(t, terms))

	require.NoError(t, ea.Resign(ctx))
	_, err = r.Leader(ctx, coordinator)
	require.ErrorIs(t, err, membership.ErrNoLeader)
	require.NoError(t, ea.Resign(ctx), "resigning without leading is a no-op")
}

func TestCampaignWithdrawsOnCancel(t *testing.T) {
	ctx := context.Background()
	r := open(t, enginetest.Etcd(t), "t/", time.Minute)
	a, b := register(t, r, membership.RoleCoordinator, "a"), register(t, r, membership.RoleCoordinator, "b")
	ea := election(t, a)
	_, err := ea.Campaign(ctx)
	require.NoError(t, err)

	cctx, cancel := context.WithCancel(ctx)
	bWon := campaign(cctx, election(t, b))
	cancel()
	require.ErrorIs(t, await(t, bWon).err, context.Canceled)

	// b withdrew: when a resigns nobody leads.
	require.NoError(t, ea.Resign(ctx))
	_, err = r.Leader(ctx, coordinator)
	require.ErrorIs(t, err, membership.ErrNoLeader)
}

func TestCampaignEndsWhenSessionLost(t *testing.T) {
	ctx := context.Background()
	endpoint := enginetest.Etcd(t)
	r := open(t, endpoint, "t/", time.Minute)
	leader := register(t, r, membership.RoleCoordinator, "leader")
	_, err := election(t, leader).Campaign(ctx)
	require.NoError(t, err)

	proc, kill := openKillable(t, endpoint, "t/", 2*time.Second)
	candidate, err := proc.Register(ctx, membership.RoleCoordinator, "candidate")
	require.NoError(t, err)
	won := campaign(ctx, election(t, candidate))
	kill() // the candidate's process dies while waiting
	require.Error(t, await(t, won).err)
	require.NoError(t, candidate.Close())

	term, err := r.Leader(ctx, coordinator)
	require.NoError(t, err)
	require.Equal(t, leader.ID(), term.Leader.ID)
	_, err = leader.Election("Bad Name")
	require.Error(t, err)
}
