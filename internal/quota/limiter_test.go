package quota

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestLimiterPunishment: a full bucket admits a request bigger than itself
// and then refuses until the refill has paid the debt back.
func TestLimiterPunishment(t *testing.T) {
	t0 := time.Unix(1000, 0)
	l := NewLimiter(10) // 10 tokens/s, at most 10 held
	require.True(t, l.AllowN(t0, 25), "a full bucket admits any request")
	require.False(t, l.AllowN(t0, 1), "in debt (-15)")
	require.False(t, l.AllowN(t0.Add(1400*time.Millisecond), 1), "still in debt (-1)")
	require.True(t, l.AllowN(t0.Add(1500*time.Millisecond), 1), "paid back (0)")
	require.False(t, l.AllowN(t0.Add(1500*time.Millisecond), 1))

	// A long idle time refills at most one second of tokens.
	t1 := t0.Add(time.Hour)
	require.True(t, l.AllowN(t1, 10.5))
	require.False(t, l.AllowN(t1, 1), "the bucket held 10, not an hour's worth")
}

// TestLimiterSteadyRate: over time the admitted tokens follow the rate.
func TestLimiterSteadyRate(t *testing.T) {
	t0 := time.Unix(1000, 0)
	l := NewLimiter(100)
	admitted := 0
	for i := range 10000 { // 10 s in 1 ms steps, 1 token each
		if l.AllowN(t0.Add(time.Duration(i)*time.Millisecond), 1) {
			admitted++
		}
	}
	require.InDelta(t, 100+100*10, admitted, 2, "one burst of 100, then 100/s")
}

func TestLimiterInfZeroCancelSetRate(t *testing.T) {
	t0 := time.Unix(1000, 0)
	inf := NewLimiter(Inf)
	for range 1000 {
		require.True(t, inf.AllowN(t0, 1e12))
	}
	zero := NewLimiter(0)
	require.False(t, zero.AllowN(t0, 1))

	l := NewLimiter(5)
	require.True(t, l.AllowN(t0, 5))
	require.True(t, l.AllowN(t0, 5), "0 tokens left: still admitted")
	require.False(t, l.AllowN(t0, 1))
	l.Cancel(5)
	require.True(t, l.AllowN(t0, 1), "the tokens given back count")

	// From unlimited to a rate: the bucket starts full at the new rate.
	l = NewLimiter(Inf)
	l.SetRate(t0, 2)
	require.Equal(t, 2.0, l.Rate())
	require.True(t, l.AllowN(t0, 3))
	require.False(t, l.AllowN(t0, 1), "-1 after the first request")
	// A lower rate caps the tokens held; a higher one refills faster.
	l.SetRate(t0.Add(time.Second), 100)
	require.True(t, l.AllowN(t0.Add(1100*time.Millisecond), 1))
}
