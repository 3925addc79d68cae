package wal

import (
	"context"
	"sync"
	"time"
)

// RemotePins extends Pins to readers in other processes: the query nodes
// of a cluster, which replay the WAL from offsets the truncating process
// (the coordinator) cannot see. Each reader process reports, per pchannel,
// the lowest offset it still needs (Report, from its own Pins.Floors);
// the report is held with the process's membership session: it counts
// while the node is live (SetLive, NodeJoined) and goes when the node
// leaves (NodeLeft). Truncate passes through to the wrapped Truncater
// (the local Pins) lowered to the smallest live pin of the pchannel.
//
// Two gaps are closed so that a reader is never truncated under:
//
//   - A node that is live but has not reported yet (it just joined, or this
//     process just took over as coordinator) blocks every truncation until
//     it reports: its pins are unknown. So does a live set not yet known.
//   - A node that starts a replay pins locally, then reads its start (the
//     recovery info) from this process, and reports the pin up to one
//     report interval later. The read holds the pchannel itself (Hold, then
//     HoldAt with the start offset it returned) for a grace period longer
//     than the report interval, so no truncation passes the start before
//     the node's report covers it.
//
// It is safe for concurrent use. Truncate runs under the lock that Hold
// takes, so a truncation never overlaps the window between a Hold and the
// read of the start offset.
type RemotePins struct {
	log   Truncater
	grace time.Duration
	now   func() time.Time

	mu      sync.Mutex
	known   bool                       // the live set was given (SetLive)
	live    map[int64]bool             // live nodes
	reports map[int64]map[string]int64 // by node: pchannel → lowest offset needed
	next    int64
	holds   map[int64]hold
}

type hold struct {
	pchannel string
	offset   int64
	until    time.Time // zero: until HoldAt
}

// NewRemotePins wraps log's truncation; a read's hold lasts grace after
// HoldAt (it must exceed the readers' report interval).
func NewRemotePins(log Truncater, grace time.Duration) *RemotePins {
	return &RemotePins{
		log: log, grace: grace, now: time.Now,
		live: map[int64]bool{}, reports: map[int64]map[string]int64{}, holds: map[int64]hold{},
	}
}

// SetLive sets the live reader nodes (a membership watch's snapshot);
// the reports of nodes not among them are dropped.
func (p *RemotePins) SetLive(nodes []int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.known = true
	p.live = make(map[int64]bool, len(nodes))
	for _, id := range nodes {
		p.live[id] = true
	}
	for id := range p.reports {
		if !p.live[id] {
			delete(p.reports, id)
		}
	}
}

// NodeJoined adds a live node; until it reports, nothing is truncated.
func (p *RemotePins) NodeJoined(id int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.live[id] = true
}

// NodeLeft drops a node whose session ended, and its pins.
func (p *RemotePins) NodeLeft(id int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.live, id)
	delete(p.reports, id)
}

// Report replaces a node's pins: per pchannel, the lowest offset it still
// needs (a pchannel it does not name, it does not read). A report of a
// node that is not live is ignored: its session ended, and it must join
// again (a new node) to read.
func (p *RemotePins) Report(node int64, pins map[string]int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.live[node] {
		return
	}
	cp := make(map[string]int64, len(pins))
	for ch, off := range pins {
		cp[ch] = off
	}
	p.reports[node] = cp
}

// Hold holds all of pchannel's records for a read of a replay's start and
// returns the hold's ID; HoldAt then moves it to the start read.
func (p *RemotePins) Hold(pchannel string) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	p.holds[p.next] = hold{pchannel: pchannel}
	return p.next
}

// HoldAt moves a hold to offset and lets it expire after the grace period
// (a failed read passes the offset it holds now: the hold just expires).
func (p *RemotePins) HoldAt(id, offset int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if h, ok := p.holds[id]; ok {
		h.offset, h.until = offset, p.now().Add(p.grace)
		p.holds[id] = h
	}
}

// Floor returns the offset below which pchannel's records may go, before
// lowered to the live pins and holds, and false when nothing may go (a
// live node has not reported, or the live set is not known yet).
func (p *RemotePins) Floor(pchannel string, before int64) (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.floorLocked(pchannel, before)
}

func (p *RemotePins) floorLocked(pchannel string, before int64) (int64, bool) {
	if !p.known {
		return 0, false
	}
	for id := range p.live {
		pins, ok := p.reports[id]
		if !ok {
			return 0, false
		}
		if off, ok := pins[pchannel]; ok && off < before {
			before = off
		}
	}
	now := p.now()
	for id, h := range p.holds {
		if !h.until.IsZero() && now.After(h.until) {
			delete(p.holds, id)
			continue
		}
		if h.pchannel == pchannel && h.offset < before {
			before = h.offset
		}
	}
	return before, true
}

// Truncate truncates the wrapped log below before, lowered to the live
// pins and holds of the pchannel; it truncates nothing while a live node's
// pins are unknown.
func (p *RemotePins) Truncate(ctx context.Context, pchannel string, before int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	before, ok := p.floorLocked(pchannel, before)
	if !ok || before <= 0 {
		return nil
	}
	return p.log.Truncate(ctx, pchannel, before)
}
