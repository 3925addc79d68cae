package quota

import (
	"math"
	"sync"
	"time"
)

// Inf is the rate of a limiter that admits everything.
var Inf = math.Inf(1)

// Limiter is a token bucket of rate tokens per second that holds at most
// one second of tokens and admits a request while it holds any token (see
// the package documentation). A rate of 0 admits nothing; Inf admits
// everything. It is safe for concurrent use.
type Limiter struct {
	mu     sync.Mutex
	rate   float64
	tokens float64
	last   time.Time
}

// NewLimiter returns a full limiter of rate tokens per second.
func NewLimiter(rate float64) *Limiter {
	return &Limiter{rate: rate, tokens: burst(rate)}
}

func burst(rate float64) float64 {
	if math.IsInf(rate, 1) {
		return math.MaxFloat64
	}
	return rate
}

// Rate returns the limiter's rate.
func (l *Limiter) Rate() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rate
}

// advance refills the bucket up to now; l.mu is held.
func (l *Limiter) advance(now time.Time) {
	if !l.last.IsZero() && now.After(l.last) && l.rate > 0 && !math.IsInf(l.rate, 1) {
		l.tokens = math.Min(l.tokens+now.Sub(l.last).Seconds()*l.rate, burst(l.rate))
	}
	if l.last.IsZero() || now.After(l.last) {
		l.last = now
	}
}

// AllowN reports whether a request of n tokens is admitted at now, and if
// so takes the tokens.
func (l *Limiter) AllowN(now time.Time, n float64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case math.IsInf(l.rate, 1):
		return true
	case l.rate <= 0:
		return false
	}
	l.advance(now)
	if l.tokens < 0 {
		return false
	}
	l.tokens -= n
	return true
}

// Cancel gives back n tokens an admitted request took.
func (l *Limiter) Cancel(n float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !math.IsInf(l.rate, 1) && l.rate > 0 {
		l.tokens = math.Min(l.tokens+n, burst(l.rate))
	}
}

// SetRate changes the rate at now, keeping the tokens earned so far (at
// most one second of the new rate).
func (l *Limiter) SetRate(now time.Time, rate float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if rate == l.rate {
		return
	}
	l.advance(now)
	if math.IsInf(l.rate, 1) || l.rate <= 0 {
		l.tokens = burst(rate) // from unlimited or closed: start full
	}
	l.rate = rate
	l.tokens = math.Min(l.tokens, burst(rate))
}
