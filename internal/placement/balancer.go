package placement

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/strata-db/strata/internal/membership"
	"github.com/strata-db/strata/internal/metastore"
)

// BalancerConfig configures a ChannelBalancer.
type BalancerConfig struct {
	// Policy is the channel policy.
	Policy ChannelPolicy `json:"policy"`
	// Interval is how often the balancer plans without a membership
	// event, so that new vchannels (a collection was created) get owners.
	// Default 2s.
	Interval time.Duration `json:"interval"`
}

// DefaultBalancerConfig returns the default configuration.
func DefaultBalancerConfig() BalancerConfig {
	return BalancerConfig{Policy: DefaultChannelPolicy(), Interval: 2 * time.Second}
}

// Validate reports a configuration that cannot work.
func (c BalancerConfig) Validate() error {
	if c.Interval <= 0 {
		return fmt.Errorf("placement: balancer interval %v: want > 0", c.Interval)
	}
	return c.Policy.Validate()
}

// ChannelBalancer is the loop that keeps the data-node channel placement
// current: it follows the live data nodes (a membership watch), plans
// with AssignChannels on every change, on every Interval and on each
// Rebalance request, saves the plan (Store.SaveChannels) and then hands
// every moved channel over (Handoffs) to apply, the effect that tells the
// new owner. It is the only writer of the channel records; run it in the
// elected coordinator only, over its fenced meta store.
type ChannelBalancer struct {
	cfg      BalancerConfig
	store    *Store
	channels func() []string
	rec      Recoveries
	apply    func(context.Context, Handoff) error
	logger   *slog.Logger

	rebalance chan struct{}

	mu    sync.Mutex
	owner map[string]int64 // the last saved plan

	// pending are the handoffs apply failed, by channel, tried again on
	// each step while the channel's saved assignment is still theirs (only
	// Run's goroutine uses it).
	pending map[string]Handoff
}

// NewChannelBalancer returns a balancer. channels lists the vchannels to
// place (every vchannel of every collection); rec gives their
// checkpoints; apply (may be nil) runs for each move after the plan is
// saved.
func NewChannelBalancer(cfg BalancerConfig, store *Store, channels func() []string, rec Recoveries,
	apply func(context.Context, Handoff) error, logger *slog.Logger,
) (*ChannelBalancer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if apply == nil {
		apply = func(context.Context, Handoff) error { return nil }
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &ChannelBalancer{
		cfg: cfg, store: store, channels: channels, rec: rec, apply: apply, logger: logger,
		rebalance: make(chan struct{}, 1), pending: map[string]Handoff{},
	}, nil
}

// Rebalance asks the running balancer for an explicit rebalance step;
// requests made while one is pending coalesce.
func (b *ChannelBalancer) Rebalance() {
	select {
	case b.rebalance <- struct{}{}:
	default:
	}
}

// Owners returns the channel owners as last saved.
func (b *ChannelBalancer) Owners() map[string]int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.owner)
}

// Run plans until ctx ends, following w (a watch of the data-node role,
// which Run drains; the caller cancels the watch with ctx). It returns
// nil when ctx ends, and an error wrapping metastore.ErrFenced when the
// coordinator lost its term; other save errors (etcd unavailable) are
// logged and the plan is tried again.
//
// A handoff apply fails is tried again on each later step while the
// channel's saved assignment is still the one it delivers, so apply must
// be idempotent.
func (b *ChannelBalancer) Run(ctx context.Context, w *membership.Watcher) error {
	current, err := b.assignments(ctx)
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return err
	}
	live := make(map[int64]membership.Node, len(w.Nodes))
	for _, n := range w.Nodes {
		live[n.ID] = n
	}
	// Tell every live owner its channels again: the coordinator that
	// delivered them may have died before it could.
	for ch, a := range current {
		if n, ok := live[a.Node]; ok && a.Epoch > 0 {
			b.pending[ch] = Handoff{
				Move: Move{Channel: ch, From: a.Node, To: a.Node, Reason: ReasonResume}, Epoch: a.Epoch,
				FromAddress: n.Address, ToAddress: n.Address,
			}
		}
	}
	tick := time.NewTicker(b.cfg.Interval)
	defer tick.Stop()
	events := w.Events
	rebalance := false
	for {
		next, err := b.step(ctx, current, live, rebalance)
		switch {
		case errors.Is(err, metastore.ErrFenced):
			return err
		case err != nil && ctx.Err() == nil:
			// etcd unavailable: keep the last saved plan, try again.
			b.logger.Warn("channel placement not saved; retrying", "err", err)
		default:
			current = next
		}
		rebalance = false
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-events:
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("placement: data-node watch ended: %w", w.Err())
			}
			switch e.Type {
			case membership.Added, membership.Updated:
				live[e.Node.ID] = e.Node
			case membership.Removed:
				delete(live, e.Node.ID)
				b.logger.Warn("data node gone; moving its channels", "node_id", e.Node.ID)
			}
		case <-tick.C:
		case <-b.rebalance:
			rebalance = true
		}
	}
}

// assignments loads the saved assignments, trying again every Interval
// while the meta store fails (etcd unavailable), as a plan's save is: a
// coordinator started during an outage waits it out instead of stopping.
// A fenced store (the term ended) or the end of ctx ends it.
func (b *ChannelBalancer) assignments(ctx context.Context) (map[string]Assignment, error) {
	for {
		current, err := b.store.Assignments(ctx)
		if err == nil || errors.Is(err, metastore.ErrFenced) || ctx.Err() != nil {
			return current, err
		}
		b.logger.Warn("channel placement not loaded; retrying", "err", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(b.cfg.Interval):
		}
	}
}

// step plans once, saves the plan and applies its moves (and the moves
// still pending); it returns the saved assignments.
func (b *ChannelBalancer) step(ctx context.Context, current map[string]Assignment, live map[int64]membership.Node,
	rebalance bool,
) (map[string]Assignment, error) {
	nodes := slices.Sorted(maps.Keys(live))
	plan := AssignChannels(Owners(current), nodes, b.channels(), b.cfg.Policy, rebalance)
	if len(plan.Unassigned) > 0 {
		b.logger.Warn("channels without a live data node", "count", len(plan.Unassigned), "err", ErrNoNodes)
	}
	saved, err := b.store.SaveChannels(ctx, current, plan)
	if err != nil {
		return current, err
	}
	b.mu.Lock()
	b.owner = Owners(saved)
	b.mu.Unlock()
	hs, err := Handoffs(ctx, plan.Moves, b.rec)
	if err != nil {
		// The new owners read their recovery themselves when they start
		// the channel; the handoffs go without the checkpoints to log.
		b.logger.Warn("reading the moved channels' checkpoints failed", "moves", len(plan.Moves), "err", err)
		hs = make([]Handoff, len(plan.Moves))
		for i, m := range plan.Moves {
			hs[i] = Handoff{Move: m}
		}
	}
	var todo []Handoff
	for _, h := range hs {
		h.Epoch = saved[h.Channel].Epoch
		h.FromAddress, h.ToAddress = live[h.From].Address, live[h.To].Address
		b.logger.Info("channel moved", "vchannel", h.Channel, "from", h.From, "to", h.To, "reason", string(h.Reason),
			"epoch", h.Epoch, "checkpoint", h.Checkpoint.Position.Offset, "seek_offset", h.SeekOffset)
		delete(b.pending, h.Channel)
		todo = append(todo, h)
	}
	for _, ch := range slices.Sorted(maps.Keys(b.pending)) {
		h := b.pending[ch]
		delete(b.pending, ch)
		if a, ok := saved[ch]; !ok || a.Node != h.To || a.Epoch != h.Epoch {
			continue // superseded: a later move or a drop
		}
		if _, ok := live[h.To]; !ok {
			continue // the next plan moves it on
		}
		if h.From != 0 {
			if _, ok := live[h.From]; !ok {
				h.FromAddress = "" // died meanwhile: nothing to release
			}
		}
		todo = append(todo, h)
	}
	for _, h := range todo {
		if err := b.apply(ctx, h); err != nil {
			b.pending[h.Channel] = h
			b.logger.Warn("channel handoff not delivered; retrying", "vchannel", h.Channel, "to", h.To, "err", err)
		}
	}
	return saved, nil
}
