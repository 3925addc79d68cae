package segment

import (
	"errors"
	"fmt"
)

// Holders. A segment's columns and indexes may point into memory that is
// not the Go heap's (a read-only mapping of a cache file, package
// mmapcache), which must be released explicitly and never while a reader
// uses it. So a segment counts its holders: its owner (the one New
// returns to, 1) and every reader that Acquires it. Release drops one; the
// last one to go runs the functions given to OnFree, once, and the segment
// must not be read after that. A segment whose memory is all Go heap
// registers nothing, and counting costs it nothing else.
//
//	New ──▶ held by owner (refs 1) ──Acquire/Release by readers──▶ …
//	owner Release ──▶ readers still holding keep it ──last Release──▶ freed (OnFree run)

// ErrFreed is returned by OnFree for a segment already freed.
var ErrFreed = errors.New("segment: freed")

// Acquire adds a holder: the segment is not freed until it is Released.
// It returns false, adding nothing, when the segment is already freed.
func (s *Segment) Acquire() bool {
	for {
		r := s.refs.Load()
		if r <= 0 {
			return false
		}
		if s.refs.CompareAndSwap(r, r+1) {
			return true
		}
	}
}

// Release drops a holder (the owner's, or one Acquire added). The last
// one runs the OnFree functions and returns their joined errors.
func (s *Segment) Release() error {
	switch r := s.refs.Add(-1); {
	case r > 0:
		return nil
	case r < 0:
		return fmt.Errorf("segment %d: released more often than held", s.ID)
	}
	s.freeMu.Lock()
	fns := s.onFree
	s.onFree, s.freed = nil, true
	s.freeMu.Unlock()
	var errs []error
	for _, fn := range fns {
		errs = append(errs, fn())
	}
	return errors.Join(errs...)
}

// OnFree registers fn to run when the segment is freed (its last holder
// released it): it releases memory the segment's columns or indexes point
// into. It fails with ErrFreed, not registering fn, on a freed segment.
func (s *Segment) OnFree(fn func() error) error {
	s.freeMu.Lock()
	defer s.freeMu.Unlock()
	if s.freed {
		return fmt.Errorf("segment %d: %w", s.ID, ErrFreed)
	}
	s.onFree = append(s.onFree, fn)
	return nil
}
