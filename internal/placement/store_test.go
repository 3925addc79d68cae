package placement_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/metastore/embedded"
	"github.com/strata-db/strata/internal/placement"
)

func openKV(t *testing.T) metastore.KV {
	t.Helper()
	kv, err := embedded.Open(filepath.Join(t.TempDir(), "meta.db"), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, kv.Close()) })
	return kv
}

func TestStoreChannels(t *testing.T) {
	ctx := context.Background()
	kv := openKV(t)
	st := placement.NewStore(kv)
	got, err := st.Channels(ctx)
	require.NoError(t, err)
	require.Empty(t, got)

	policy := placement.DefaultChannelPolicy()
	channels := chans(150) // more than one transaction's worth
	plan := placement.AssignChannels(got, []int64{1, 2}, channels, policy, false)
	require.NoError(t, st.SaveChannels(ctx, got, plan))
	got, err = st.Channels(ctx)
	require.NoError(t, err)
	require.Equal(t, plan.Owners, got)
	v, err := kv.Get(ctx, placement.ChannelKey(channels[0]))
	require.NoError(t, err)
	require.JSONEq(t, `{"node":1}`, string(v))

	// Node 1 dies and a channel is dropped: only node 1's channels are
	// rewritten, the dropped one is deleted.
	next := placement.AssignChannels(got, []int64{2}, channels[1:], policy, false)
	require.NoError(t, st.SaveChannels(ctx, got, next))
	after, err := st.Channels(ctx)
	require.NoError(t, err)
	require.Equal(t, next.Owners, after)
	_, err = kv.Get(ctx, placement.ChannelKey(channels[0]))
	require.ErrorIs(t, err, metastore.ErrNotFound)

	// No live node: the records keep naming the dead owner.
	none := placement.AssignChannels(after, nil, channels[1:], policy, false)
	require.Len(t, none.Unassigned, len(channels)-1)
	require.NoError(t, st.SaveChannels(ctx, after, none))
	kept, err := st.Channels(ctx)
	require.NoError(t, err)
	require.Equal(t, after, kept)
	back := placement.AssignChannels(kept, []int64{3}, channels[1:], policy, false)
	for _, m := range back.Moves {
		require.Equal(t, placement.ReasonOwnerDead, m.Reason)
		require.EqualValues(t, 2, m.From)
	}
}

func TestStoreReplicas(t *testing.T) {
	ctx := context.Background()
	st := placement.NewStore(openKV(t))
	rs, err := placement.SpawnReplicas(3, []int64{1, 2, 3, 4}, nil)
	require.NoError(t, err)
	for i := range rs {
		rs[i] = placement.Assign(rs[i], []string{"v0", "v1"}, segs(10, 20, 30), nil)
	}
	require.NoError(t, st.SaveReplicas(ctx, 7, rs))
	got, err := st.Replicas(ctx, 7)
	require.NoError(t, err)
	require.Equal(t, rs, got)

	require.NoError(t, st.SaveReplicas(ctx, 7, rs[:1]))
	got, err = st.Replicas(ctx, 7)
	require.NoError(t, err)
	require.Equal(t, rs[:1], got, "replicas no longer listed are deleted")

	require.NoError(t, st.SaveReplicas(ctx, 70, rs))
	require.NoError(t, st.DropReplicas(ctx, 7))
	got, err = st.Replicas(ctx, 7)
	require.NoError(t, err)
	require.Empty(t, got)
	got, err = st.Replicas(ctx, 70)
	require.NoError(t, err)
	require.Len(t, got, 3, "dropping collection 7 keeps collection 70")
}
