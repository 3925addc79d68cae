package wal

import (
	"context"
	"errors"
	"sync"
)

// Truncater is the part of a Log that drops old records.
type Truncater interface {
	// Truncate allows records with offset < before to be deleted (Log.Truncate).
	Truncate(ctx context.Context, pchannel string, before int64) error
}

// Pins keeps a pchannel's records from being truncated while a reader that
// is not covered by the channel checkpoints still needs them: a query node
// delegator replays its vchannel from the seek offset it read at load time,
// and loading the sealed segments first can take long enough for the data
// node to move the checkpoints (and the coordinator to truncate) past it.
//
// A reader pins its pchannel before it reads the offset it will start from
// (Pin at 0 holds every record), moves the pin as it consumes, and releases
// it when it stops. Truncate passes through to the wrapped log, lowered to
// the smallest pin of the pchannel; it runs under the same lock as Pin, so a
// truncation never overlaps the window between a Pin and the read of the
// start offset.
type Pins struct {
	log  Truncater
	mu   sync.Mutex
	next int64
	pins map[int64]pin
}

type pin struct {
	pchannel string
	offset   int64
}

// NewPins wraps log's truncation; a nil log makes pins that only hold (a
// reader process that reports them to the truncating one, Floors).
func NewPins(log Truncater) *Pins {
	return &Pins{log: log, pins: map[int64]pin{}}
}

// Pin holds pchannel's records at offsets ≥ offset and returns the pin's ID.
func (p *Pins) Pin(pchannel string, offset int64) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	p.pins[p.next] = pin{pchannel: pchannel, offset: offset}
	return p.next
}

// Move sets a pin's offset (readers move forward as they consume).
func (p *Pins) Move(id, offset int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if old, ok := p.pins[id]; ok {
		old.offset = offset
		p.pins[id] = old
	}
}

// Release drops a pin; releasing an unknown or released pin does nothing.
func (p *Pins) Release(id int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.pins, id)
}

// Floor returns the offset below which pchannel's records may go: before,
// lowered to the smallest pin of the pchannel.
func (p *Pins) Floor(pchannel string, before int64) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.floorLocked(pchannel, before)
}

func (p *Pins) floorLocked(pchannel string, before int64) int64 {
	for _, pn := range p.pins {
		if pn.pchannel == pchannel && pn.offset < before {
			before = pn.offset
		}
	}
	return before
}

// Truncate truncates the wrapped log below before, or below the smallest
// pin of the pchannel when that is lower.
func (p *Pins) Truncate(ctx context.Context, pchannel string, before int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	before = p.floorLocked(pchannel, before)
	if before <= 0 {
		return nil
	}
	if p.log == nil {
		return errors.New("wal: these pins hold no log to truncate (NewPins(nil))")
	}
	return p.log.Truncate(ctx, pchannel, before)
}

// Floors returns the smallest pin of each pinned pchannel: the offsets a
// reader in another process reports to the process that truncates
// (RemotePins.Report).
func (p *Pins) Floors() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int64{}
	for _, pn := range p.pins {
		if cur, ok := out[pn.pchannel]; !ok || pn.offset < cur {
			out[pn.pchannel] = pn.offset
		}
	}
	return out
}
