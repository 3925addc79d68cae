// Package rgroup keeps Milvus's resource groups: named sets of query nodes
// that collections are loaded into, so that the replicas of one collection
// run on nodes no other group uses (Milvus 2.4's declarative resource
// groups).
//
// # Groups and their configuration
//
// A group has a configuration (Config): Requests, the number of query
// nodes it should hold at least, Limits, the number it may hold at most,
// and TransferFrom and TransferTo, the groups it prefers to take nodes
// from and give nodes to. The default group, __default_resource_group, always
// exists, cannot be dropped, requests 0 nodes and is limited to 1,000,000
// (Milvus's default capacity); a group created without a configuration
// requests and is limited to 0 nodes.
//
// # Node assignment
//
// Every live query node belongs to exactly one group. SetLive follows the
// membership: a node that left is removed from its group; a node that
// joins goes to the group missing the most nodes (Requests above its
// count), else to the group with the most room under its Limits (the
// default group, normally), else to the default group. After every change
// of nodes or configurations the groups are recovered, as Milvus's
// resource manager does: while a group has fewer nodes than it requests,
// it takes one from the group that can spare the most (a group over its
// limit first, then the groups named in its TransferFrom, then any group
// above its requests); then, while a group holds more nodes than its
// limit, it gives one to the group with the most room (a group missing
// nodes first, then the groups in its TransferTo, then any group under
// its limit), and to the default group when no group has room. Moved
// nodes are the highest IDs of their group (the most recently joined), so
// the same inputs always give the same assignment.
//
// TransferNode is the older imperative API, kept as Milvus keeps it: it
// lowers the source group's requests (and, but for the default group, its
// limits) by n and raises the target's requests (and its limits, to at
// least the requests) by n, then recovers.
//
// # Storage
//
// Each group is one meta-store record at "resource_group/<name>", its JSON
// record: {"v":1,"name":…,"config":{"requests":N,"limits":N,
// "transfer_from":[…],"transfer_to":[…]},"nodes":[IDs]}. The node lists are
// stored so that a coordinator taking over keeps the assignment (node IDs
// are never reused); nodes that are no longer alive are dropped from them
// on the next SetLive. Every change is one transaction.
package rgroup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/placement"
)

const (
	// Default is the name of the resource group every Milvus deployment has.
	Default = placement.DefaultResourceGroup
	// DefaultCapacity is the default group's limit, Milvus's
	// defaultResourceGroupCapacity, reported as its capacity.
	DefaultCapacity = 1_000_000
	// MaxGroups is how many groups may exist, the default one included
	// (Milvus's quotaAndLimits.limits.maxResourceGroupNumOfQueryNode).
	MaxGroups = 1024
	// maxNameLength is Milvus's proxy.maxNameLength.
	maxNameLength = 255

	keyPrefix = "resource_group/"
)

// Milvus's error codes for resource groups (merr).
const (
	codeNotFound      int32 = 300
	codeAlreadyExist  int32 = 301
	codeReachLimit    int32 = 302
	codeIllegalConfig int32 = 303
)

// Config is a group's configuration.
type Config struct {
	// Requests is the number of query nodes the group should hold at least.
	Requests int32 `json:"requests"`
	// Limits is the number of query nodes the group may hold at most.
	Limits int32 `json:"limits"`
	// TransferFrom names the groups the group prefers to take nodes from.
	TransferFrom []string `json:"transfer_from,omitempty"`
	// TransferTo names the groups the group prefers to give nodes to.
	TransferTo []string `json:"transfer_to,omitempty"`
}

func (c Config) equal(o Config) bool {
	return c.Requests == o.Requests && c.Limits == o.Limits &&
		slices.Equal(c.TransferFrom, o.TransferFrom) && slices.Equal(c.TransferTo, o.TransferTo)
}

func (c Config) clone() Config {
	c.TransferFrom, c.TransferTo = slices.Clone(c.TransferFrom), slices.Clone(c.TransferTo)
	return c
}

// Group is a snapshot of one group.
type Group struct {
	// Name is the group's name.
	Name string
	// Config is its configuration.
	Config Config
	// Nodes are the live query nodes it holds, sorted.
	Nodes []int64
}

// Capacity is what Milvus reports as the group's capacity: its requests,
// DefaultCapacity for the default group.
func (g Group) Capacity() int32 {
	if g.Name == Default {
		return DefaultCapacity
	}
	return g.Config.Requests
}

// Info is a group as Milvus's DescribeResourceGroup reports it.
type Info struct {
	Group
	// LoadedReplicas counts, by collection name, the replicas loaded in
	// the group.
	LoadedReplicas map[string]int32
	// Outgoing counts, by collection name, the nodes of other groups that
	// still serve replicas loaded in this group.
	Outgoing map[string]int32
	// Incoming counts, by collection name, the nodes of this group that
	// still serve replicas loaded in other groups.
	Incoming map[string]int32
	// NodeInfos describes the group's nodes.
	NodeInfos []NodeInfo
}

// NodeInfo is a query node of a group.
type NodeInfo struct {
	// ID is the node's ID.
	ID int64
	// Address is its internal RPC address; Hostname the host part of it.
	Address, Hostname string
}

// record is a group's stored form (see the package documentation).
type record struct {
	V      int     `json:"v"`
	Name   string  `json:"name"`
	Config Config  `json:"config"`
	Nodes  []int64 `json:"nodes"`
}

type group struct {
	name  string
	cfg   Config
	nodes map[int64]bool
}

func (g *group) n() int { return len(g.nodes) }

// missing is how many nodes the group lacks to its requests.
func (g *group) missing() int { return max(int(g.cfg.Requests)-g.n(), 0) }

// oversized is how many nodes the group holds beyond its requests.
func (g *group) oversized() int { return max(g.n()-int(g.cfg.Requests), 0) }

// room is how many more nodes the group may hold.
func (g *group) room() int { return max(int(g.cfg.Limits)-g.n(), 0) }

// redundant is how many nodes the group holds beyond its limits.
func (g *group) redundant() int { return max(g.n()-int(g.cfg.Limits), 0) }

// pick is the node the group gives away: its highest ID.
func (g *group) pick() int64 { return slices.Max(slices.Collect(maps.Keys(g.nodes))) }

// Manager keeps the resource groups. It is safe for concurrent use; the
// coordinator that owns the query placement is its only writer (in
// cluster mode through its fenced meta store).
type Manager struct {
	kv metastore.KV

	mu     sync.Mutex
	groups map[string]*group
}

// Open reads the stored groups and makes sure the default group exists.
func Open(ctx context.Context, kv metastore.KV) (*Manager, error) {
	m := &Manager{kv: kv, groups: map[string]*group{}}
	kvs, err := kv.Scan(ctx, keyPrefix)
	if err != nil {
		return nil, fmt.Errorf("rgroup: read the resource groups: %w", err)
	}
	owner := map[int64]string{}
	for _, e := range kvs {
		var r record
		if err := json.Unmarshal(e.Value, &r); err != nil {
			return nil, fmt.Errorf("rgroup: resource group record %s: %w", e.Key, err)
		}
		if r.V != 1 || r.Name == "" || r.Name != strings.TrimPrefix(e.Key, keyPrefix) {
			return nil, fmt.Errorf("rgroup: resource group record %s: version %d, name %q", e.Key, r.V, r.Name)
		}
		g := &group{name: r.Name, cfg: r.Config, nodes: map[int64]bool{}}
		for _, n := range r.Nodes {
			if other, ok := owner[n]; ok {
				return nil, fmt.Errorf("rgroup: query node %d is stored in resource groups %s and %s", n, other, r.Name)
			}
			owner[n] = r.Name
			g.nodes[n] = true
		}
		m.groups[r.Name] = g
	}
	if _, ok := m.groups[Default]; !ok {
		def := &group{name: Default, cfg: Config{Limits: DefaultCapacity}, nodes: map[int64]bool{}}
		m.groups[Default] = def
		if err := m.save(ctx, []string{Default}, nil); err != nil {
			delete(m.groups, Default)
			return nil, err
		}
	}
	return m, nil
}

// save stores the named groups and deletes the dropped ones, in one
// transaction. The caller holds mu (or owns m alone).
func (m *Manager) save(ctx context.Context, names, dropped []string) error {
	ops := make([]metastore.Op, 0, len(names)+len(dropped))
	for _, name := range names {
		g := m.groups[name]
		b, err := json.Marshal(record{V: 1, Name: name, Config: g.cfg, Nodes: slices.Sorted(maps.Keys(g.nodes))})
		if err != nil {
			return err
		}
		ops = append(ops, metastore.Put(keyPrefix+name, b))
	}
	for _, name := range dropped {
		ops = append(ops, metastore.Delete(keyPrefix+name))
	}
	if len(ops) == 0 {
		return nil
	}
	if err := m.kv.Txn(ctx, ops...); err != nil {
		return errcode.New(305, "resource group service available: storing the resource groups failed: %v", err)
	}
	return nil
}

// snapshot copies the groups, so that a failed save can be undone.
func (m *Manager) snapshot() map[string]*group {
	out := make(map[string]*group, len(m.groups))
	for name, g := range m.groups {
		out[name] = &group{name: g.name, cfg: g.cfg.clone(), nodes: maps.Clone(g.nodes)}
	}
	return out
}

// commit recovers the groups and stores those that changed since before,
// or restores before when storing fails. The caller holds mu.
func (m *Manager) commit(ctx context.Context, before map[string]*group) error {
	m.recover()
	var names, dropped []string
	for _, name := range slices.Sorted(maps.Keys(m.groups)) {
		g, b := m.groups[name], before[name]
		if b == nil || !b.cfg.equal(g.cfg) || !maps.Equal(b.nodes, g.nodes) {
			names = append(names, name)
		}
	}
	for name := range before {
		if _, ok := m.groups[name]; !ok {
			dropped = append(dropped, name)
		}
	}
	slices.Sort(dropped)
	if err := m.save(ctx, names, dropped); err != nil {
		m.groups = before
		return err
	}
	return nil
}

// ValidateName checks a resource group name as Milvus's proxy does.
func ValidateName(name string) error {
	if name == "" {
		return errcode.New(errcode.IllegalArgument, "resource group name couldn't be empty")
	}
	invalid := fmt.Sprintf("Invalid resource group name %s.", name)
	if len(name) > maxNameLength {
		return errcode.Invalid("%s the length of a resource group name must be less than %d characters", invalid, maxNameLength)
	}
	first := name[0]
	if first != '_' && !isAlpha(first) {
		return errcode.Invalid("%s the first character of a resource group name must be an underscore or letter", invalid)
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; c != '_' && !isAlpha(c) && (c < '0' || c > '9') {
			return errcode.Invalid("%s resource group name can only contain numbers, letters and underscores", invalid)
		}
	}
	return nil
}

func isAlpha(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// NotFound is Milvus's "resource group not found" error for name.
func NotFound(name string) error {
	return errcode.New(codeNotFound, "resource group not found[rg=%s]", name)
}

// invalidParam words a refusal as Milvus's merr.WrapErrParameterInvalid.
func invalidParam(reason, expected, actual string) error {
	return errcode.Invalid("%s: invalid parameter[expected=%s][actual=%s]", reason, expected, actual)
}

func illegal(name, reason string) error {
	return errcode.New(codeIllegalConfig, "%s: resource group illegal config[rg=%s]", reason, name)
}

// validate checks a configuration for group name against the groups that
// exist (plus those being created or changed with it, in others).
func (m *Manager) validate(name string, cfg Config, others map[string]Config) error {
	if cfg.Requests < 0 || cfg.Limits < 0 {
		return illegal(name, "node num in `requests` or `limits` should not less than 0")
	}
	if cfg.Limits < cfg.Requests {
		return illegal(name, "limits node num should not less than requests node num")
	}
	exists := func(g string) bool {
		_, ok := m.groups[g]
		_, ok2 := others[g]
		return ok || ok2
	}
	for _, from := range cfg.TransferFrom {
		if from == name {
			return illegal(name, fmt.Sprintf("resource group in `TransferFrom` %s should not be itself", name))
		}
		if !exists(from) {
			return illegal(name, fmt.Sprintf("resource group in `TransferFrom` %s not exist", from))
		}
	}
	for _, to := range cfg.TransferTo {
		if to == name {
			return illegal(name, fmt.Sprintf("resource group in `TransferTo` %s should not be itself", name))
		}
		if !exists(to) {
			return illegal(name, fmt.Sprintf("resource group in `TransferTo` %s not exist", to))
		}
	}
	return nil
}

// Create creates a group; cfg nil creates it requesting and limited to 0
// nodes. Creating a group that exists with the same configuration does
// nothing (Milvus's idempotent create); with another configuration it is
// refused.
func (m *Manager) Create(ctx context.Context, name string, cfg *Config) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	c := Config{}
	if cfg != nil {
		c = cfg.clone()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if g, ok := m.groups[name]; ok {
		if g.cfg.equal(c) {
			return nil
		}
		return errcode.New(codeAlreadyExist, "resource group already exist, but create with different config[rg=%s]", name)
	}
	if len(m.groups) >= MaxGroups {
		return errcode.New(codeReachLimit, "resource group num reach limit[rg=%s][limit=%d]", name, MaxGroups)
	}
	if err := m.validate(name, c, nil); err != nil {
		return err
	}
	before := m.snapshot()
	m.groups[name] = &group{name: name, cfg: c, nodes: map[int64]bool{}}
	return m.commit(ctx, before)
}

// Update replaces the configurations of existing groups, all at once.
func (m *Manager) Update(ctx context.Context, cfgs map[string]Config) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.update(ctx, cfgs)
}

func (m *Manager) update(ctx context.Context, cfgs map[string]Config) error {
	for _, name := range slices.Sorted(maps.Keys(cfgs)) {
		if _, ok := m.groups[name]; !ok {
			return NotFound(name)
		}
		if err := m.validate(name, cfgs[name], nil); err != nil {
			return err
		}
	}
	before := m.snapshot()
	for name, cfg := range cfgs {
		m.groups[name].cfg = cfg.clone()
	}
	return m.commit(ctx, before)
}

// Drop drops a group. Dropping one that does not exist does nothing
// (Milvus's idempotent drop); the default group, a group whose limits are
// not 0, one that another group names in TransferFrom or TransferTo, and
// one that replicas are loaded in (inUse) are refused.
func (m *Manager) Drop(ctx context.Context, name string, inUse func(group string) int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	g, ok := m.groups[name]
	if !ok {
		return nil
	}
	if name == Default {
		return invalidParam("default resource group is not deletable", "not default resource group", name)
	}
	if g.cfg.Limits != 0 {
		return invalidParam("resource group's limits node num is not 0", "not empty resource group", name)
	}
	for _, other := range slices.Sorted(maps.Keys(m.groups)) {
		o := m.groups[other]
		if slices.Contains(o.cfg.TransferFrom, name) {
			return invalidParam(fmt.Sprintf("resource group %s is used by %s's `TransferFrom`, remove that configuration first", name, other),
				"not `TransferFrom` of resource group", name)
		}
		if slices.Contains(o.cfg.TransferTo, name) {
			return invalidParam(fmt.Sprintf("resource group %s is used by %s's `TransferTo`, remove that configuration first", name, other),
				"not `TransferTo` of resource group", name)
		}
	}
	if inUse != nil {
		if n := inUse(name); n > 0 {
			return errcode.Invalid("some replicas still loaded in resource group[%s], release it first", name)
		}
	}
	before := m.snapshot()
	delete(m.groups, name)
	// Its nodes (none, but for a group that could not give them away yet)
	// are assigned again.
	for n := range g.nodes {
		m.assign(n)
	}
	return m.commit(ctx, before)
}

// TransferNode moves n nodes from source to target by changing their
// configurations (see the package documentation).
func (m *Manager) TransferNode(ctx context.Context, source, target string, n int) error {
	if source == target {
		return errcode.Invalid("source resource group and target resource group should not be the same, resource group: %s", source)
	}
	if n <= 0 {
		return errcode.Invalid("invalid NumNode %d", n)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	src, ok := m.groups[source]
	if !ok {
		return NotFound(source)
	}
	dst, ok := m.groups[target]
	if !ok {
		return NotFound(target)
	}
	if src.n() < n {
		return errcode.New(errcode.ResourceGroupNodeNotEnough,
			"resource group node not enough[rg=%s][currentNodeNum=%d][expectedNodeNum=%d]", source, src.n(), n)
	}
	sc, dc := src.cfg.clone(), dst.cfg.clone()
	sc.Requests = max(sc.Requests-int32(n), 0)
	if source != Default {
		sc.Limits = max(sc.Limits-int32(n), 0)
	}
	dc.Requests += int32(n)
	dc.Limits = max(dc.Limits, dc.Requests)
	return m.update(ctx, map[string]Config{source: sc, target: dc})
}

// SetLive follows the live query nodes: nodes not listed leave their
// group, nodes no group holds are assigned, and the groups are recovered.
func (m *Manager) SetLive(ctx context.Context, nodes []int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	live := make(map[int64]bool, len(nodes))
	for _, n := range nodes {
		live[n] = true
	}
	before := m.snapshot()
	held := map[int64]bool{}
	for _, g := range m.groups {
		for n := range g.nodes {
			if !live[n] {
				delete(g.nodes, n)
			}
			held[n] = true
		}
	}
	for _, n := range slices.Sorted(maps.Keys(live)) {
		if !held[n] {
			m.assign(n)
		}
	}
	if m.equal(before) {
		return nil
	}
	return m.commit(ctx, before)
}

// equal reports whether the groups' nodes and configurations are those of
// before.
func (m *Manager) equal(before map[string]*group) bool {
	if len(before) != len(m.groups) {
		return false
	}
	for name, g := range m.groups {
		b, ok := before[name]
		if !ok || !b.cfg.equal(g.cfg) || !maps.Equal(b.nodes, g.nodes) {
			return false
		}
	}
	return true
}

// assign gives a node no group holds to a group (see the package
// documentation).
func (m *Manager) assign(node int64) {
	if g := m.best(func(g *group) int { return g.missing() }, nil); g != nil {
		g.nodes[node] = true
		return
	}
	if g := m.best(func(g *group) int { return g.room() }, nil); g != nil {
		g.nodes[node] = true
		return
	}
	m.groups[Default].nodes[node] = true
}

// best returns the group with the highest positive score (the first by
// name on a tie), skipping skip; nil when no score is positive.
func (m *Manager) best(score func(*group) int, skip *group) *group {
	var out *group
	top := 0
	for _, name := range slices.Sorted(maps.Keys(m.groups)) {
		g := m.groups[name]
		if g == skip {
			continue
		}
		if s := score(g); s > top {
			out, top = g, s
		}
	}
	return out
}

// recover moves nodes until no group misses nodes that another can spare
// and no group holds more than its limit where another has room. Every
// move lowers a group's shortfall or excess, so it ends.
func (m *Manager) recover() {
	for _, name := range slices.Sorted(maps.Keys(m.groups)) {
		dst := m.groups[name]
		for dst.missing() > 0 {
			src := m.best(func(g *group) int {
				switch {
				case g.oversized() == 0:
					return 0
				case g.redundant() > 0:
					return g.redundant() * 1_000_000
				case slices.Contains(dst.cfg.TransferFrom, g.name):
					return g.oversized() * 100_000
				}
				return g.oversized()
			}, dst)
			if src == nil {
				break
			}
			m.move(src, dst)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(m.groups)) {
		src := m.groups[name]
		for src.redundant() > 0 {
			dst := m.best(func(g *group) int {
				switch {
				case g.room() == 0:
					return 0
				case g.missing() > 0:
					return g.missing() * 1_000_000
				case slices.Contains(src.cfg.TransferTo, g.name):
					return g.room() * 100_000
				}
				return g.room()
			}, src)
			if dst == nil {
				if src.name == Default {
					break
				}
				dst = m.groups[Default]
			}
			m.move(src, dst)
		}
	}
}

func (m *Manager) move(src, dst *group) {
	n := src.pick()
	delete(src.nodes, n)
	dst.nodes[n] = true
}

// List returns the groups' names, sorted.
func (m *Manager) List() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.groups))
}

// Describe returns a group.
func (m *Manager) Describe(name string) (Group, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g, ok := m.groups[name]
	if !ok {
		return Group{}, NotFound(name)
	}
	return Group{Name: name, Config: g.cfg.clone(), Nodes: slices.Sorted(maps.Keys(g.nodes))}, nil
}

// Nodes returns the nodes of a group, sorted (nil when it does not exist).
func (m *Manager) Nodes(name string) []int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if g, ok := m.groups[name]; ok {
		return slices.Sorted(maps.Keys(g.nodes))
	}
	return nil
}

// GroupOf returns the group that holds a node ("" when none does).
func (m *Manager) GroupOf(node int64) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, g := range m.groups {
		if g.nodes[node] {
			return name
		}
	}
	return ""
}

// Check validates the resource groups of a load with replicas replicas, as
// Milvus does: none (the default group), one for every replica, or one per
// replica; each must exist and hold at least as many nodes as the
// replicas it gets. It returns the group of each replica.
func (m *Manager) Check(groups []string, replicas int) ([]string, error) {
	replicas = max(replicas, 1)
	if len(groups) == 0 {
		groups = []string{Default}
	}
	if len(groups) != 1 && len(groups) != replicas {
		return nil, errcode.Invalid("resource group num can only be 0, 1 or same as replica number")
	}
	out := make([]string, replicas)
	for i := range out {
		out[i] = groups[min(i, len(groups)-1)]
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	need := map[string]int{}
	for _, g := range out {
		need[g]++
	}
	for _, name := range slices.Sorted(maps.Keys(need)) {
		g, ok := m.groups[name]
		if !ok {
			return nil, errcode.New(codeNotFound, "failed to spawn replica for collection: resource group not found[rg=%s]", name)
		}
		if g.n() < need[name] {
			return nil, errcode.New(errcode.ResourceGroupNodeNotEnough,
				"failed to spawn replica for collection: resource group node not enough[rg=%s][currentNodeNum=%d][expectedNodeNum=%d]",
				name, g.n(), need[name])
		}
	}
	return out, nil
}

// ErrNotFound reports whether err is Milvus's "resource group not found".
func ErrNotFound(err error) bool {
	var e *errcode.Error
	return errors.As(err, &e) && e.Code == codeNotFound
}
