// Package health describes what is degraded in a running server. A server
// that is up (it answers requests) may still have parts that cannot do their
// work: a collection that failed to load, a WAL record a consumer had to
// quarantine, a pchannel whose writes fail. Components report such parts as
// Problems through a Source; the composition root gathers every Source into
// the readiness detail (/healthz/detail) and the log, so that damage is
// reported instead of taking the whole server down or hiding.
package health

import (
	"sort"
	"sync"
	"time"
)

// Problem is one degraded part of the server.
type Problem struct {
	// Component names the part that reports it ("wal", "datanode",
	// "querynode", "metastore", …).
	Component string `json:"component"`
	// Subject is what is affected, such as "pchannel by-dev-rootcoord-dml_3"
	// or "collection demo".
	Subject string `json:"subject"`
	// Reason says what is wrong, naming files and offsets where known.
	Reason string `json:"reason"`
	// Since is when the problem was first reported.
	Since time.Time `json:"since"`
	// WritesUnavailable is set when the problem stops writes (inserts,
	// deletes or DDL) to the subject.
	WritesUnavailable bool `json:"writesUnavailable,omitempty"`
}

// Source is a component that can list its current problems.
type Source interface {
	// Problems returns the component's current problems (nil when healthy).
	Problems() []Problem
}

// SourceFunc adapts a function to Source.
type SourceFunc func() []Problem

// Problems implements Source.
func (f SourceFunc) Problems() []Problem { return f() }

// Set is a concurrency-safe set of problems keyed by subject, for components
// that record problems as they happen. The zero value is ready to use.
type Set struct {
	mu       sync.Mutex
	problems map[string]Problem
}

// Report records (or replaces) the problem for p.Subject. Since is kept from
// an earlier report of the same subject, and set to now when zero.
func (s *Set) Report(p Problem) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.problems == nil {
		s.problems = map[string]Problem{}
	}
	if old, ok := s.problems[p.Subject]; ok && !old.Since.IsZero() {
		p.Since = old.Since
	}
	if p.Since.IsZero() {
		p.Since = time.Now()
	}
	s.problems[p.Subject] = p
}

// Clear removes the problem of subject, if any.
func (s *Set) Clear(subject string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.problems, subject)
}

// Problems implements Source: the recorded problems ordered by subject.
func (s *Set) Problems() []Problem {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.problems) == 0 {
		return nil
	}
	out := make([]Problem, 0, len(s.problems))
	for _, p := range s.problems {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Subject < out[j].Subject })
	return out
}

// Gather returns the problems of every source, in source order.
func Gather(sources ...Source) []Problem {
	var out []Problem
	for _, s := range sources {
		if s != nil {
			out = append(out, s.Problems()...)
		}
	}
	return out
}
