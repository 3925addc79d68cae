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
	got, err := st.Assignments(ctx)
	require.NoError(t, err)
	require.Empty(t, got)

	policy := placement.DefaultChannelPolicy()
	channels := chans(150) // more than one transaction's worth
	plan := placement.AssignChannels(placement.Owners(got), []int64{1, 2}, channels, policy, false)
	saved, err := st.SaveChannels(ctx, got, plan)
	require.NoError(t, err)
	got, err = st.Assignments(ctx)
	require.NoError(t, err)
	require.Equal(t, saved, got, "SaveChannels returns what is stored")
	require.Equal(t, plan.Owners, placement.Owners(got))
	v, err := kv.Get(ctx, placement.ChannelKey(channels[0]))
	require.NoError(t, err)
	require.JSONEq(t, `{"node":1,"epoch":1}`, string(v), "a channel's first owner has epoch 1")

	// Node 1 dies and a channel is dropped: only node 1's channels are
	// rewritten (their epoch raised), the dropped one is deleted.
	next := placement.AssignChannels(placement.Owners(got), []int64{2}, channels[1:], policy, false)
	saved, err = st.SaveChannels(ctx, got, next)
	require.NoError(t, err)
	after, err := st.Assignments(ctx)
	require.NoError(t, err)
	require.Equal(t, saved, after)
	require.Equal(t, next.Owners, placement.Owners(after))
	for _, ch := range channels[1:] {
		want := int64(1)
		if got[ch].Node == 1 {
			want = 2
		}
		require.Equal(t, want, after[ch].Epoch, "%s moved from node %d", ch, got[ch].Node)
	}
	_, err = kv.Get(ctx, placement.ChannelKey(channels[0]))
	require.ErrorIs(t, err, metastore.ErrNotFound)

	// No live node: the records keep naming the dead owner, epoch and all.
	none := placement.AssignChannels(placement.Owners(after), nil, channels[1:], policy, false)
	require.Len(t, none.Unassigned, len(channels)-1)
	saved, err = st.SaveChannels(ctx, after, none)
	require.NoError(t, err)
	kept, err := st.Assignments(ctx)
	require.NoError(t, err)
	require.Equal(t, after, kept)
	require.Equal(t, kept, saved)
	back := placement.AssignChannels(placement.Owners(kept), []int64{3}, channels[1:], policy, false)
	for _, m := range back.Moves {
		require.Equal(t, placement.ReasonOwnerDead, m.Reason)
		require.EqualValues(t, 2, m.From)
	}
	owners, err := st.Channels(ctx)
	require.NoError(t, err)
	require.Equal(t, placement.Owners(kept), owners)
}

// A record written before epochs existed reads as epoch 0; its next owner
// gets epoch 1.
func TestStoreChannelsWithoutEpoch(t *testing.T) {
	ctx := context.Background()
	kv := openKV(t)
	require.NoError(t, kv.Txn(ctx, metastore.Put(placement.ChannelKey("v0"), []byte(`{"node":4}`))))
	st := placement.NewStore(kv)
	got, err := st.Assignments(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]placement.Assignment{"v0": {Node: 4}}, got)
	plan := placement.AssignChannels(placement.Owners(got), []int64{5}, []string{"v0"}, placement.DefaultChannelPolicy(), false)
	saved, err := st.SaveChannels(ctx, got, plan)
	require.NoError(t, err)
	require.Equal(t, map[string]placement.Assignment{"v0": {Node: 5, Epoch: 1}}, saved)
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
