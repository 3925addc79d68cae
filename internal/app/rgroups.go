package app

import (
	"context"
	"slices"
	"sync"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/placement"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/proxy"
	"github.com/strata-db/strata/internal/rgroup"
)

// localGroups is the standalone's resource groups (proxy.ResourceGroups):
// Milvus's groups over its one query node (proxy.StandaloneNodeID), which a
// standalone Milvus has too. The node belongs to one group at a time
// (TransferNode moves it), each loaded collection is one replica in the
// group it was loaded in, and a load into a group without the node fails
// as Milvus's does. A replica's group is saved as cluster mode saves its
// replicas (placement.Store, placement/replica/{collection}/1), so a
// restart keeps it.
type localGroups struct {
	m       *rgroup.Manager
	store   *placement.Store
	colls   collectionLister
	address string
	qs      proxy.QueryServer // the query node (set by server)

	mu sync.Mutex
	in map[int64]string // collection → the group its replica is loaded in
}

// collectionLister resolves and lists collections (the root
// coordinator).
type collectionLister interface {
	CollectionByID(id int64) (*catalog.Collection, error)
	AllCollections(ctx context.Context) ([]*catalog.Collection, error)
}

// newLocalGroups keeps the groups of m over the standalone's query node,
// reported at address, and the groups of loaded replicas in store (read
// back here).
func newLocalGroups(ctx context.Context, m *rgroup.Manager, store *placement.Store, colls collectionLister, address string,
) (*localGroups, error) {
	if err := m.SetLive(ctx, []int64{proxy.StandaloneNodeID}); err != nil {
		return nil, err
	}
	g := &localGroups{m: m, store: store, colls: colls, address: address, in: map[int64]string{}}
	all, err := store.AllReplicas(ctx)
	if err != nil {
		return nil, err
	}
	for id, reps := range all {
		if reps[0].ResourceGroup != "" {
			g.in[id] = reps[0].ResourceGroup
		}
	}
	return g, nil
}

// place records the group a collection's replica is loaded in. The caller
// holds mu.
func (g *localGroups) place(ctx context.Context, collectionID int64, group string) error {
	rep := placement.Replica{ID: 1, Nodes: []int64{proxy.StandaloneNodeID}, ResourceGroup: group}
	if group == rgroup.Default {
		rep.ResourceGroup = ""
	}
	if err := g.store.SaveReplicas(ctx, collectionID, []placement.Replica{rep}); err != nil {
		return err
	}
	g.in[collectionID] = group
	return nil
}

// groupOf returns the group a loaded collection's replica is in. The
// caller holds mu.
func (g *localGroups) groupOf(collectionID int64) string {
	if name, ok := g.in[collectionID]; ok {
		return name
	}
	return rgroup.Default
}

// server wraps the query node so that loads check and record their group
// and replicas report it.
func (g *localGroups) server(qs proxy.QueryServer) proxy.QueryServer {
	g.qs = qs
	return groupedNode{QueryServer: qs, groups: g}
}

// loadedIn returns the loaded collections, each with the group its
// replica is in.
func (g *localGroups) loadedIn(ctx context.Context) (map[*catalog.Collection]string, error) {
	cols, err := g.colls.AllCollections(ctx)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[*catalog.Collection]string{}
	for _, col := range cols {
		loaded, _, err := g.qs.Loaded(ctx, col.ID)
		if err != nil {
			return nil, err
		}
		if loaded {
			out[col] = g.groupOf(col.ID)
		}
	}
	return out, nil
}

// groupedNode is the standalone's query node with its resource group.
type groupedNode struct {
	proxy.QueryServer
	groups *localGroups
}

// Load implements proxy.Loader: a first load is placed in its group (the
// default one when none is named), which must hold the node.
func (n groupedNode) Load(ctx context.Context, collectionID int64, partitions []int64, replicaNumber int,
	resourceGroups []string,
) error {
	loaded, _, err := n.Loaded(ctx, collectionID)
	if err != nil {
		return err
	}
	loading, err := n.Loading(ctx, collectionID)
	if err != nil {
		return err
	}
	if loaded || loading {
		return n.QueryServer.Load(ctx, collectionID, partitions, replicaNumber, resourceGroups)
	}
	per, err := n.groups.m.Check(resourceGroups, 1)
	if err != nil {
		return err
	}
	n.groups.mu.Lock()
	err = n.groups.place(ctx, collectionID, per[0])
	n.groups.mu.Unlock()
	if err != nil {
		return err
	}
	return n.QueryServer.Load(ctx, collectionID, partitions, replicaNumber, resourceGroups)
}

// Release implements proxy.Loader.
func (n groupedNode) Release(collectionID int64) {
	n.QueryServer.Release(collectionID)
	n.groups.mu.Lock()
	defer n.groups.mu.Unlock()
	delete(n.groups.in, collectionID)
	// A record left behind (the store failed) names the group of a
	// collection that is not loaded: only loaded ones are asked for theirs.
	_ = n.groups.store.DropReplicas(context.Background(), collectionID)
}

// Replicas implements proxy.Loader: the node's one replica, in its group.
func (n groupedNode) Replicas(ctx context.Context, collectionID int64) ([]plan.Replica, error) {
	if loaded, _, err := n.Loaded(ctx, collectionID); err != nil || !loaded {
		return nil, err
	}
	col, err := n.groups.colls.CollectionByID(collectionID)
	if err != nil {
		return nil, err
	}
	leaders := make(map[string]int64, len(col.VChannels))
	for _, ch := range col.VChannels {
		leaders[ch] = proxy.StandaloneNodeID
	}
	n.groups.mu.Lock()
	defer n.groups.mu.Unlock()
	return []plan.Replica{{
		ID: 1, Nodes: []int64{proxy.StandaloneNodeID}, Leaders: leaders,
		Addresses:     map[int64]string{proxy.StandaloneNodeID: n.groups.address},
		ResourceGroup: n.groups.groupOf(collectionID),
	}}, nil
}

// CreateResourceGroup implements proxy.ResourceGroups.
func (g *localGroups) CreateResourceGroup(ctx context.Context, name string, cfg *rgroup.Config) error {
	return g.m.Create(ctx, name, cfg)
}

// UpdateResourceGroups implements proxy.ResourceGroups.
func (g *localGroups) UpdateResourceGroups(ctx context.Context, cfgs map[string]rgroup.Config) error {
	return g.m.Update(ctx, cfgs)
}

// DropResourceGroup implements proxy.ResourceGroups.
func (g *localGroups) DropResourceGroup(ctx context.Context, name string) error {
	loaded, err := g.loadedIn(ctx)
	if err != nil {
		return err
	}
	return g.m.Drop(ctx, name, func(group string) int {
		n := 0
		for _, in := range loaded {
			if in == group {
				n++
			}
		}
		return n
	})
}

// TransferNode implements proxy.ResourceGroups.
func (g *localGroups) TransferNode(ctx context.Context, source, target string, n int) error {
	if n <= 0 {
		return errcode.Invalid("invalid parameter[expected=NumNode > 0][actual=invalid NumNode %d]", n)
	}
	return g.m.TransferNode(ctx, source, target, n)
}

// TransferReplica implements proxy.ResourceGroups: the one replica moves to
// target when target holds the node.
func (g *localGroups) TransferReplica(ctx context.Context, source, target string, collectionID int64, n int) error {
	for _, rg := range []struct{ role, name string }{{"target", target}, {"source", source}} {
		if _, err := g.m.Describe(rg.name); err != nil {
			return errcode.New(errcode.CodeOf(err), "the %s resource group[%s] doesn't exist: %s", rg.role, rg.name, err.Error())
		}
	}
	if n <= 0 {
		return errcode.Invalid("invalid parameter[expected=NumReplica > 0][actual=invalid NumReplica %d]", n)
	}
	loaded, _, err := g.qs.Loaded(ctx, collectionID)
	if err != nil {
		return err
	}
	if !loaded {
		return errcode.New(errcode.CollectionNotLoaded, "collection not loaded[collection=%d]", collectionID)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	found := 0
	if g.groupOf(collectionID) == source {
		found = 1
	}
	if found < n {
		return errcode.Invalid("only found [%d] replicas of collection [%d] in source resource group [%s], but %d asked: "+
			"NumReplica not greater than the number of replica in source resource group", found, collectionID, source, n)
	}
	if source == target {
		return nil
	}
	if g.m.GroupOf(proxy.StandaloneNodeID) != target {
		return errcode.New(errcode.Unexpected, "failed to transfer replica between resource group, err=nodes not enough"+
			"[rg=%s][currentNodeNum=0][expectedNodeNum=1]", target)
	}
	return g.place(ctx, collectionID, target)
}

// ListResourceGroups implements proxy.ResourceGroups.
func (g *localGroups) ListResourceGroups(context.Context) ([]string, error) { return g.m.List(), nil }

// DescribeResourceGroup implements proxy.ResourceGroups.
func (g *localGroups) DescribeResourceGroup(ctx context.Context, name string) (rgroup.Info, error) {
	grp, err := g.m.Describe(name)
	if err != nil {
		return rgroup.Info{}, err
	}
	info := rgroup.Info{Group: grp, LoadedReplicas: map[string]int32{}, Outgoing: map[string]int32{}, Incoming: map[string]int32{}}
	here := slices.Contains(grp.Nodes, proxy.StandaloneNodeID)
	if here {
		info.NodeInfos = []rgroup.NodeInfo{{ID: proxy.StandaloneNodeID, Address: g.address, Hostname: "localhost"}}
	}
	loaded, err := g.loadedIn(ctx)
	if err != nil {
		return rgroup.Info{}, err
	}
	for col, in := range loaded {
		switch {
		case in == name && !here:
			info.LoadedReplicas[col.Name]++
			info.Outgoing[col.Name]++
		case in == name:
			info.LoadedReplicas[col.Name]++
		case here:
			info.Incoming[col.Name]++
		}
	}
	return info, nil
}

var _ proxy.ResourceGroups = (*localGroups)(nil)
