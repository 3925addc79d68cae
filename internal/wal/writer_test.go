package wal_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/wal"
	"github.com/strata-db/strata/internal/wal/local"
)

// testClock is a hybrid clock over a counter; jitter makes Allocate take a
// random short time so that concurrent callers interleave.
type testClock struct {
	mu     sync.Mutex
	last   uint64
	jitter bool
	err    error
}

func (c *testClock) Allocate(_ context.Context, n uint32) (uint64, error) {
	if c.jitter && rand.IntN(4) == 0 {
		time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	phys := uint64(time.Now().UnixMilli()) << 18
	ts := max(phys, c.last+1)
	c.last = ts + uint64(n) - 1
	return ts, nil
}

func openLog(t *testing.T) *local.Log {
	t.Helper()
	l, err := local.Open(local.Config{Dir: t.TempDir()}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, l.Close()) })
	return l
}

// scanAll returns every message on pchannel.
func scanAll(t *testing.T, l wal.Log, pchannel string) []wal.Entry {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	end, err := l.End(ctx, pchannel)
	require.NoError(t, err)
	r, err := l.Read(ctx, pchannel, 0)
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close()) }()
	var out []wal.Entry
	for range end {
		rec, err := r.Next(ctx)
		require.NoError(t, err)
		msgs, err := wal.DecodeRecord(rec.Data)
		require.NoError(t, err)
		for _, m := range msgs {
			out = append(out, wal.Entry{Position: wal.Position{PChannel: pchannel, Offset: rec.Offset, TimeTick: m.TimeTick}, Message: m})
		}
	}
	return out
}

func TestWriterMonotonicUnderConcurrency(t *testing.T) {
	l := openLog(t)
	w := wal.NewWriter(l, &testClock{jitter: true}, wal.WriterConfig{}, nil)
	pchans := []string{wal.PChannelName("", 0), wal.PChannelName("", 1), wal.PChannelName("", 2), wal.PChannelName("", 3)}
	const workers, perWorker = 16, 40
	var (
		mu   sync.Mutex
		sent = map[string]uint64{} // payload -> returned timestamp
		wg   sync.WaitGroup
	)
	for g := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for i := range perWorker {
				ctx := context.Background()
				if i%10 == 9 {
					ts, err := w.Tick(ctx, pchans[rng.IntN(len(pchans))])
					if err != nil {
						t.Error(err)
					}
					_ = ts
					continue
				}
				// An overlapping random set of 1..3 pchannels.
				perm := rng.Perm(len(pchans))[:1+rng.IntN(3)]
				batch := map[string][]wal.Message{}
				payload := fmt.Sprintf("g%d-%d", g, i)
				for _, k := range perm {
					vch := wal.VChannelName(pchans[k], 100, 0)
					batch[pchans[k]] = []wal.Message{
						{Type: wal.TypeInsert, VChannel: vch, Payload: []byte(payload)},
						{Type: wal.TypeDelete, VChannel: vch, Payload: []byte(payload)},
					}
				}
				ts, err := w.Append(ctx, batch)
				if err != nil {
					t.Error(err)
					continue
				}
				for _, msgs := range batch {
					for _, m := range msgs {
						if m.TimeTick != ts {
							t.Errorf("message stamped %d, Append returned %d", m.TimeTick, ts)
						}
					}
				}
				mu.Lock()
				sent[payload] = ts
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	seen := map[string]int{}
	for _, p := range pchans {
		var last uint64
		entries := scanAll(t, l, p)
		prev := int64(-1)
		for i, e := range entries {
			// The messages of one append share a record (and its offset).
			require.Contains(t, []int64{prev, prev + 1}, e.Position.Offset, "entry %d", i)
			prev = e.Position.Offset
			require.Equal(t, p, e.Position.PChannel)
			require.GreaterOrEqual(t, e.Message.TimeTick, last, "%s offset %d: timestamp went backwards", p, i)
			last = e.Message.TimeTick
			if e.Message.Type == wal.TypeTimeTick {
				require.Empty(t, e.Message.VChannel)
				continue
			}
			want, ok := sent[string(e.Message.Payload)]
			require.True(t, ok)
			require.Equal(t, want, e.Message.TimeTick, "all pchannels of a batch share its timestamp")
			seen[string(e.Message.Payload)]++
		}
	}
	for payload := range sent {
		require.Positive(t, seen[payload], payload)
	}
}

func TestWriterTick(t *testing.T) {
	l := openLog(t)
	w := wal.NewWriter(l, &testClock{}, wal.WriterConfig{}, nil)
	ctx := context.Background()
	var prev uint64
	for i := range 3 {
		ts, err := w.Tick(ctx, "p")
		require.NoError(t, err)
		require.Greater(t, ts, prev)
		prev = ts
		end, err := l.End(ctx, "p")
		require.NoError(t, err)
		require.Equal(t, int64(i+1), end, "Tick returns once the tick is durable")
	}
	entries := scanAll(t, l, "p")
	require.Len(t, entries, 3)
	require.Equal(t, wal.TypeTimeTick, entries[2].Message.Type)
	require.Equal(t, prev, entries[2].Position.TimeTick)
}

func TestWriterErrors(t *testing.T) {
	clockErr := errors.New("tso down")
	for _, tc := range []struct {
		name  string
		clock *testClock
		close bool
		batch map[string][]wal.Message
		want  error
	}{
		{"EmptyBatch", &testClock{}, false, map[string][]wal.Message{"p": nil}, wal.ErrEmptyBatch},
		{"ClockFails", &testClock{err: clockErr}, false, map[string][]wal.Message{"p": {{Type: wal.TypeInsert}}}, clockErr},
		{"LogClosed", &testClock{}, true, map[string][]wal.Message{"p": {{Type: wal.TypeInsert}}}, wal.ErrClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := openLog(t)
			if tc.close {
				require.NoError(t, l.Close())
			}
			w := wal.NewWriter(l, tc.clock, wal.WriterConfig{}, nil)
			_, err := w.Append(context.Background(), tc.batch)
			require.ErrorIs(t, err, tc.want)
			if !tc.close {
				end, err := l.End(context.Background(), "p")
				require.NoError(t, err)
				require.Zero(t, end)
			}
		})
	}
}

func TestWriterRunTicksIdleChannels(t *testing.T) {
	l := openLog(t)
	const interval = 40 * time.Millisecond
	w := wal.NewWriter(l, &testClock{}, wal.WriterConfig{TickInterval: interval}, nil)
	ctx := context.Background()
	// "busy" gets an append every few milliseconds, so it never idles.
	_, err := w.Append(ctx, map[string][]wal.Message{"busy": {{Type: wal.TypeInsert, VChannel: "busy_1v0"}}})
	require.NoError(t, err)
	w.Watch("idle")
	w.Watch("idle") // idempotent
	w.Watch("busy")
	w.Watch("gone")
	w.Unwatch("gone")

	runCtx, cancel := context.WithCancel(ctx)
	runDone := make(chan error, 1)
	go func() { runDone <- w.Run(runCtx) }()
	deadline := time.Now().Add(8 * interval)
	for time.Now().Before(deadline) {
		_, err := w.Append(ctx, map[string][]wal.Message{"busy": {{Type: wal.TypeInsert, VChannel: "busy_1v0"}}})
		require.NoError(t, err)
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case err := <-runDone:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop on cancel")
	}

	count := func(p string) int {
		n := 0
		for _, e := range scanAll(t, l, p) {
			if e.Message.Type == wal.TypeTimeTick {
				n++
			}
		}
		return n
	}
	require.GreaterOrEqual(t, count("idle"), 3, "an idle watched pchannel is ticked every interval")
	require.LessOrEqual(t, count("busy"), 2, "a busy pchannel needs no ticks")
	end, err := l.End(ctx, "gone")
	require.NoError(t, err)
	require.Zero(t, end, "unwatched pchannels are not ticked")
	idle := scanAll(t, l, "idle")
	require.True(t, slices.IsSortedFunc(idle, func(a, b wal.Entry) int {
		return int(a.Message.TimeTick>>18) - int(b.Message.TimeTick>>18)
	}))
}

func TestWriterRunStopsWhenLogClosed(t *testing.T) {
	l, err := local.Open(local.Config{Dir: t.TempDir()}, nil)
	require.NoError(t, err)
	w := wal.NewWriter(l, &testClock{}, wal.WriterConfig{TickInterval: time.Millisecond}, nil)
	w.Watch("p")
	require.NoError(t, l.Close())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.ErrorIs(t, w.Run(ctx), wal.ErrClosed)
}

func TestWriterConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  wal.WriterConfig
		ok   bool
	}{
		{"Defaults", wal.WriterDefaults(), true},
		{"Zero", wal.WriterConfig{}, false},
		{"Set", wal.WriterConfig{TickInterval: time.Second}, true},
		{"Negative", wal.WriterConfig{TickInterval: -time.Second}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, wal.ErrInvalidWriterConfig)
			}
		})
	}
	require.Equal(t, wal.DefaultTickInterval, wal.WriterDefaults().TickInterval)
}
