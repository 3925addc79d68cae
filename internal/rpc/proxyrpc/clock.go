package proxyrpc

import (
	"context"
	"fmt"
	"sync"
)

// Source reserves n consecutive IDs or timestamps and returns the first
// (coordrpc.Clock's Allocate and AllocateTimestamps).
type Source func(ctx context.Context, n uint32) (uint64, error)

// IDs is a proxy's ID allocator (proxy.Allocator): it serves IDs from a
// block fetched from the coordinator's ID allocator, fetching the next
// block (at least Block IDs) when a request does not fit in what is left.
// IDs left in a block the proxy drops (a restart) are never handed out:
// IDs are unique, not dense.
type IDs struct {
	src   Source
	block uint32

	mu         sync.Mutex
	next, left uint64
}

// NewIDs returns an ID allocator fetching block IDs at a time from src.
func NewIDs(src Source, block uint32) *IDs {
	return &IDs{src: src, block: max(block, 1)}
}

// Allocate implements proxy.Allocator: n consecutive IDs.
func (a *IDs) Allocate(ctx context.Context, n uint32) (uint64, error) {
	if n == 0 {
		return 0, fmt.Errorf("proxyrpc: allocate 0 IDs")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.left < uint64(n) {
		want := max(n, a.block)
		first, err := a.src(ctx, want)
		if err != nil {
			return 0, err
		}
		a.next, a.left = first, uint64(want)
	}
	first := a.next
	a.next += uint64(n)
	a.left -= uint64(n)
	return first, nil
}

// Timestamps is a proxy's timestamp allocator (proxy.Allocator): each
// request gets timestamps the coordinator's oracle issued at or after the
// request arrived, never ones fetched ahead (a read's guarantee timestamp
// must follow every write acknowledged before it). Requests that arrive
// while a fetch is in flight are coalesced into the next one: one RPC
// serves them all, each a range of its own. One fetch at a time, so the
// timestamps handed out only grow; across a coordinator failover they
// still grow, since the new coordinator's oracle starts beyond what the
// old one persisted (internal/tso), and a fetch that returns a timestamp
// not above the last one handed out fails rather than go back.
type Timestamps struct {
	src Source

	mu       sync.Mutex
	pending  []*tsWaiter
	fetching bool
	last     uint64
}

type tsWaiter struct {
	n    uint32
	done chan struct{}
	ts   uint64
	err  error
}

// NewTimestamps returns a timestamp allocator over src.
func NewTimestamps(src Source) *Timestamps { return &Timestamps{src: src} }

// Allocate implements proxy.Allocator: n consecutive timestamps.
func (a *Timestamps) Allocate(ctx context.Context, n uint32) (uint64, error) {
	if n == 0 {
		return 0, fmt.Errorf("proxyrpc: allocate 0 timestamps")
	}
	w := &tsWaiter{n: n, done: make(chan struct{})}
	a.mu.Lock()
	a.pending = append(a.pending, w)
	lead := !a.fetching
	a.fetching = true
	a.mu.Unlock()
	if lead {
		// This caller fetches for everyone queued, batch after batch, until
		// the queue is empty; the fetch outlives its own caller's
		// cancellation (others wait on it) but not the RPC's deadline.
		a.fetchLoop(context.WithoutCancel(ctx))
	}
	select {
	case <-w.done:
		return w.ts, w.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// fetchLoop serves the queued requests, one RPC per batch.
func (a *Timestamps) fetchLoop(ctx context.Context) {
	for {
		a.mu.Lock()
		batch := a.pending
		a.pending = nil
		if len(batch) == 0 {
			a.fetching = false
			a.mu.Unlock()
			return
		}
		last := a.last
		a.mu.Unlock()
		var total uint64
		for _, w := range batch {
			total += uint64(w.n)
		}
		var first uint64
		var err error
		if total > uint64(^uint32(0)) {
			err = fmt.Errorf("proxyrpc: %d timestamps requested at once", total)
		} else {
			first, err = a.src(ctx, uint32(total))
		}
		if err == nil && first <= last {
			err = fmt.Errorf("proxyrpc: the timestamp oracle went back: %d after %d", first, last)
		}
		next := first
		for _, w := range batch {
			w.ts, w.err = next, err
			next += uint64(w.n)
			close(w.done)
		}
		if err == nil {
			a.mu.Lock()
			a.last = first + total - 1
			a.mu.Unlock()
		}
	}
}
