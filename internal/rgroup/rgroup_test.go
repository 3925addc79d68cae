package rgroup

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/metastore/embedded"
)

func openKV(t *testing.T) (metastore.KV, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "meta.db")
	kv, err := embedded.Open(path, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { _ = kv.Close() })
	return kv, path
}

func open(t *testing.T, live ...int64) *Manager {
	t.Helper()
	kv, _ := openKV(t)
	m, err := Open(context.Background(), kv)
	require.NoError(t, err)
	require.NoError(t, m.SetLive(context.Background(), live))
	return m
}

func requireCode(t *testing.T, err error, code int32, msg string) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, code, errcode.CodeOf(err), err.Error())
	require.Contains(t, err.Error(), msg)
}

func TestDefaultGroupHoldsEveryNode(t *testing.T) {
	m := open(t, 3, 1, 2)
	require.Equal(t, []string{Default}, m.List())
	g, err := m.Describe(Default)
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2, 3}, g.Nodes)
	require.EqualValues(t, DefaultCapacity, g.Capacity())
	require.Equal(t, Config{Limits: DefaultCapacity}, g.Config)
}

// The suite's test_rg_default: a new group is empty; TransferNode moves a
// node in and back; the group can be dropped once its limits are 0 again.
func TestTransferNodeInAndBack(t *testing.T) {
	ctx := context.Background()
	m := open(t, 1, 2, 3)
	require.NoError(t, m.Create(ctx, "rg", nil))
	g, err := m.Describe("rg")
	require.NoError(t, err)
	require.Empty(t, g.Nodes)
	require.EqualValues(t, 0, g.Capacity())

	require.NoError(t, m.TransferNode(ctx, Default, "rg", 1))
	g, _ = m.Describe("rg")
	require.Len(t, g.Nodes, 1)
	require.EqualValues(t, 1, g.Capacity())
	require.Equal(t, Config{Requests: 1, Limits: 1}, g.Config)
	def, _ := m.Describe(Default)
	require.Len(t, def.Nodes, 2)
	require.EqualValues(t, DefaultCapacity, def.Capacity())

	requireCode(t, m.Drop(ctx, "rg", nil), errcode.IllegalArgument, "resource group's limits node num is not 0")

	require.NoError(t, m.TransferNode(ctx, "rg", Default, 1))
	g, _ = m.Describe("rg")
	require.Empty(t, g.Nodes)
	require.Equal(t, Config{}, g.Config)
	def, _ = m.Describe(Default)
	require.Equal(t, []int64{1, 2, 3}, def.Nodes)

	require.NoError(t, m.Drop(ctx, "rg", nil))
	_, err = m.Describe("rg")
	requireCode(t, err, 300, "resource group not found[rg=rg]")
	require.NoError(t, m.Drop(ctx, "rg", nil), "dropping a group that does not exist does nothing")
}

func TestCreateRefusals(t *testing.T) {
	ctx := context.Background()
	m := open(t)
	for _, name := range []string{"1rg", "rg-1", "中文", string(make([]byte, 256))} {
		requireCode(t, m.Create(ctx, name, nil), errcode.IllegalArgument, "Invalid resource group name")
	}
	requireCode(t, m.Create(ctx, "", nil), errcode.IllegalArgument, "resource group name couldn't be empty")
	require.NoError(t, m.Create(ctx, "_rg", &Config{Requests: 0, Limits: 2}))
	require.NoError(t, m.Create(ctx, "_rg", &Config{Requests: 0, Limits: 2}), "same name, same config: nothing to do")
	requireCode(t, m.Create(ctx, "_rg", nil), 301, "resource group already exist")
	requireCode(t, m.Create(ctx, "bad", &Config{Requests: 2, Limits: 1}), 303, "limits node num should not less than requests node num")
	requireCode(t, m.Create(ctx, "bad", &Config{Requests: -1}), 303, "should not less than 0")
	requireCode(t, m.Create(ctx, "bad", &Config{TransferFrom: []string{"bad"}}), 303, "should not be itself")
	requireCode(t, m.Create(ctx, "bad", &Config{TransferTo: []string{"nope"}}), 303, "resource group in `TransferTo` nope not exist")
	requireCode(t, m.Drop(ctx, Default, nil), errcode.IllegalArgument, "default resource group is not deletable")
}

func TestGroupLimit(t *testing.T) {
	ctx := context.Background()
	kv, _ := openKV(t)
	m, err := Open(ctx, kv)
	require.NoError(t, err)
	require.NoError(t, m.Create(ctx, "rg_0", nil))
	// The other groups are stored as Create stores them, 64 to a
	// transaction (a create per transaction is a second of fsyncs).
	var ops []metastore.Op
	for i := 1; i < MaxGroups-1; i++ {
		name := fmt.Sprintf("rg_%d", i)
		b, err := json.Marshal(record{V: 1, Name: name})
		require.NoError(t, err)
		ops = append(ops, metastore.Put(keyPrefix+name, b))
		if len(ops) == 64 || i == MaxGroups-2 {
			require.NoError(t, kv.Txn(ctx, ops...))
			ops = nil
		}
	}
	m, err = Open(ctx, kv)
	require.NoError(t, err)
	require.Len(t, m.List(), MaxGroups)
	requireCode(t, m.Create(ctx, "one_more", nil), 302, "resource group num reach limit")
	require.NoError(t, m.Drop(ctx, "rg_0", nil))
	require.NoError(t, m.Create(ctx, "one_more", nil))
}

// Requests are met from the groups that can spare nodes, the TransferFrom
// group first; limits push the excess out, to TransferTo first.
func TestRecoverFollowsRequestsAndLimits(t *testing.T) {
	ctx := context.Background()
	m := open(t, 1, 2, 3, 4, 5)
	require.NoError(t, m.Create(ctx, "a", &Config{Requests: 2, Limits: 2}))
	require.Len(t, m.Nodes("a"), 2)
	require.NoError(t, m.Create(ctx, "b", &Config{Requests: 0, Limits: 10}))
	require.Empty(t, m.Nodes("b"), "a group with room but no request takes nothing from others")
	require.NoError(t, m.Create(ctx, "c", &Config{Requests: 1, Limits: 1, TransferFrom: []string{"a"}}))
	// c takes from the default group, which can spare 3 beyond its 0
	// requests, rather than from a, which spares none beyond its requests.
	require.Len(t, m.Nodes("c"), 1)
	require.Len(t, m.Nodes("a"), 2)
	require.Len(t, m.Nodes(Default), 2)

	// Lowering a's limits pushes its excess out, weighted as Milvus weighs
	// it: b, its TransferTo group, scores its room (10) × 100,000 and
	// outranks the default group's room (999,998) for the first node; with
	// 9 left it no longer does, and the second goes to the default group.
	require.NoError(t, m.Update(ctx, map[string]Config{"a": {Requests: 0, Limits: 0, TransferTo: []string{"b"}}}))
	require.Empty(t, m.Nodes("a"))
	require.Equal(t, []int64{5}, m.Nodes("b"))
	require.Equal(t, []int64{1, 2, 4}, m.Nodes(Default))
	requireCode(t, m.Drop(ctx, "b", nil), errcode.IllegalArgument, "resource group's limits node num is not 0")
	requireCode(t, m.Update(ctx, map[string]Config{"nope": {}}), 300, "resource group not found[rg=nope]")
	requireCode(t, m.Drop(ctx, "a", nil), errcode.IllegalArgument, "")
	require.NoError(t, m.Update(ctx, map[string]Config{"c": {Requests: 1, Limits: 1}}))
	require.NoError(t, m.Drop(ctx, "a", func(string) int { return 0 }))
	require.NoError(t, m.Update(ctx, map[string]Config{"b": {}}))
	requireCode(t, m.Drop(ctx, "b", func(g string) int { return 1 }), errcode.IllegalArgument, "some replicas still loaded")
}

// A node that joins goes to the group missing the most; one that leaves
// is replaced from the groups that can spare one.
func TestNodesJoinAndLeave(t *testing.T) {
	ctx := context.Background()
	m := open(t, 1)
	require.NoError(t, m.Create(ctx, "a", &Config{Requests: 2, Limits: 2}))
	require.Equal(t, []int64{1}, m.Nodes("a"))
	require.NoError(t, m.SetLive(ctx, []int64{1, 2, 3}))
	require.Equal(t, []int64{1, 2}, m.Nodes("a"))
	require.Equal(t, []int64{3}, m.Nodes(Default))
	require.NoError(t, m.SetLive(ctx, []int64{2, 3}))
	require.Equal(t, []int64{2, 3}, m.Nodes("a"))
	require.Empty(t, m.Nodes(Default))
	require.Equal(t, "a", m.GroupOf(3))
}

func TestAssignmentSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	kv, _ := openKV(t)
	m, err := Open(ctx, kv)
	require.NoError(t, err)
	require.NoError(t, m.SetLive(ctx, []int64{1, 2, 3}))
	require.NoError(t, m.Create(ctx, "a", &Config{Requests: 1, Limits: 1}))
	nodes := m.Nodes("a")
	m2, err := Open(ctx, kv)
	require.NoError(t, err)
	require.Equal(t, nodes, m2.Nodes("a"))
	require.Equal(t, m.List(), m2.List())
	// A node that died while no coordinator ran is dropped on the first
	// SetLive, and the group is refilled.
	var live []int64
	for _, n := range []int64{1, 2, 3} {
		if n != nodes[0] {
			live = append(live, n)
		}
	}
	require.NoError(t, m2.SetLive(ctx, live))
	require.Len(t, m2.Nodes("a"), 1)
	require.NotEqual(t, nodes, m2.Nodes("a"))
}

func TestCheckLoadGroups(t *testing.T) {
	ctx := context.Background()
	m := open(t, 1, 2, 3)
	require.NoError(t, m.Create(ctx, "a", &Config{Requests: 1, Limits: 1}))
	got, err := m.Check(nil, 2)
	require.NoError(t, err)
	require.Equal(t, []string{Default, Default}, got)
	got, err = m.Check([]string{"a", Default}, 2)
	require.NoError(t, err)
	require.Equal(t, []string{"a", Default}, got)
	_, err = m.Check([]string{"a"}, 2)
	requireCode(t, err, errcode.ResourceGroupNodeNotEnough, "resource group node not enough[rg=a][currentNodeNum=1][expectedNodeNum=2]")
	_, err = m.Check([]string{"a", "b", Default}, 2)
	requireCode(t, err, errcode.IllegalArgument, "resource group num can only be 0, 1 or same as replica number")
	_, err = m.Check([]string{"nope"}, 1)
	requireCode(t, err, 300, "resource group not found[rg=nope]")
}

// A failed store leaves the groups as they were.
func TestFailedSaveChangesNothing(t *testing.T) {
	ctx := context.Background()
	kv, _ := openKV(t)
	m, err := Open(ctx, kv)
	require.NoError(t, err)
	require.NoError(t, m.SetLive(ctx, []int64{1, 2}))
	require.NoError(t, kv.Close())
	requireCode(t, m.Create(ctx, "a", &Config{Requests: 1, Limits: 1}), 305, "resource group service available")
	require.Equal(t, []string{Default}, m.List())
	require.Equal(t, []int64{1, 2}, m.Nodes(Default))
}
