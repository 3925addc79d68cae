package quota

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/errcode"
)

type counts map[string]int

func (c counts) RateLimited(msgType string, admitted bool) { c[fmt.Sprint(msgType, " ", admitted)]++ }

func newQuotas(t *testing.T, cfg Config, rec Recorder) (*Quotas, *time.Time) {
	t.Helper()
	q, err := New(cfg, rec)
	require.NoError(t, err)
	now := time.Unix(1000, 0)
	q.now = func() time.Time { return now }
	return q, &now
}

func requireCode(t *testing.T, err error, code int32, msg string) {
	t.Helper()
	require.Equal(t, code, errcode.CodeOf(err), "%v", err)
	require.EqualError(t, err, msg)
}

// TestDefaultsAdmitEverything: Milvus's defaults limit no rate.
func TestDefaultsAdmitEverything(t *testing.T) {
	q, _ := newQuotas(t, Defaults(), nil)
	for k := Insert; k < numKinds; k++ {
		for range 100 {
			require.NoError(t, q.Check(Request{Kind: k, DB: "default", Collection: 1, N: 1 << 30}))
		}
	}
	var none *Quotas
	require.NoError(t, none.Check(Request{Kind: Insert, N: 1}))
}

// TestRateLevels: the cluster, database and collection rates each refuse
// with code 8 and Milvus's message; a refusal at a lower level gives the
// higher levels their tokens back.
func TestRateLevels(t *testing.T) {
	cfg := Defaults()
	cfg.DQL.Enabled = true
	cfg.DQL.SearchRate = Rates{Max: 100, DB: Level{Max: 50}, Collection: Level{Max: 10}}
	cfg.DQL.QueryRate.Collection.Max = 2
	rec := counts{}
	q, now := newQuotas(t, cfg, rec)
	search := func(db string, coll int64, nq int) error {
		return q.Check(Request{Kind: Search, DB: db, Collection: coll, N: nq})
	}
	// A bucket admits while it holds any token, then goes into debt.
	require.NoError(t, search("a", 1, 11)) // cluster 89, db 39, collection -1
	err := search("a", 1, 1)
	requireCode(t, err, errcode.RateLimit,
		"request is rejected by grpc RateLimiter middleware, please retry later: rate limit exceeded[rate=10]")
	require.True(t, errcode.Status(err).GetRetriable(), "code 8 is retriable")
	// The refused search gave its token back to the cluster and database:
	// four more collections of database "a" spend 40 of its 39.
	for c := int64(2); c <= 5; c++ {
		require.NoError(t, search("a", c, 10))
	}
	require.EqualError(t, search("a", 6, 1),
		"request is rejected by grpc RateLimiter middleware, please retry later: rate limit exceeded[rate=50]")
	// Another database still has room until the cluster's 100 are spent
	// (49 left: five searches of 10).
	for c := int64(10); c < 15; c++ {
		require.NoError(t, search("b", c, 10))
	}
	require.EqualError(t, search("c", 20, 1),
		"request is rejected by grpc RateLimiter middleware, please retry later: rate limit exceeded[rate=100]")
	// A second later the buckets have refilled.
	*now = now.Add(time.Second)
	require.NoError(t, search("a", 1, 5))

	// Queries count 1 each; DML stays unlimited (dml.enabled is false).
	require.NoError(t, q.Check(Request{Kind: Query, DB: "a", Collection: 1, N: 1}))
	require.NoError(t, q.Check(Request{Kind: Query, DB: "a", Collection: 1, N: 1}))
	require.NoError(t, q.Check(Request{Kind: Query, DB: "a", Collection: 1, N: 1}))
	require.Error(t, q.Check(Request{Kind: Query, DB: "a", Collection: 1, N: 1}))
	require.NoError(t, q.Check(Request{Kind: Insert, DB: "a", Collection: 1, N: 1 << 30}))
	require.Equal(t, 1, rec["DQLQuery false"])
	require.Equal(t, 3, rec["DQLQuery true"])
	require.Equal(t, 1, rec["DMLInsert true"])
}

// TestDMLRatesInMB: DML rates are MB/s of request bytes, and a
// collection's properties override the configured collection rate even
// with dml.enabled off, as in Milvus.
func TestDMLRatesInMB(t *testing.T) {
	cfg := Defaults()
	cfg.DML.Enabled = true
	cfg.DML.InsertRate.Collection.Max = 1 // 1 MB/s
	q, now := newQuotas(t, cfg, nil)
	ins := func(coll int64, props map[string]string, n int) error {
		return q.Check(Request{Kind: Insert, DB: "d", Collection: coll, Properties: props, N: n})
	}
	require.NoError(t, ins(1, nil, 1<<20+1))
	requireCode(t, ins(1, nil, 1), errcode.RateLimit,
		"request is rejected by grpc RateLimiter middleware, please retry later: rate limit exceeded[rate=1.048576e+06]")
	require.NoError(t, q.Check(Request{Kind: Delete, DB: "d", Collection: 1, N: 1 << 30}), "deletes have their own rate")

	props := map[string]string{InsertRateProperty: "2"}
	require.NoError(t, ins(2, props, 2<<20+1))
	require.EqualError(t, ins(2, props, 1),
		"request is rejected by grpc RateLimiter middleware, please retry later: rate limit exceeded[rate=2.097152e+06]")
	// Altering the property takes effect on the next request.
	*now = now.Add(time.Second)
	require.NoError(t, ins(2, map[string]string{InsertRateProperty: "-1"}, 1<<30))
	require.NoError(t, ins(2, map[string]string{InsertRateProperty: "-1"}, 1<<30))

	off := Defaults()
	q, _ = newQuotas(t, off, nil)
	require.NoError(t, q.Check(Request{Kind: Search, Collection: 3, Properties: map[string]string{SearchRateProperty: "4"}, N: 5}))
	require.Error(t, q.Check(Request{Kind: Search, Collection: 3, Properties: map[string]string{SearchRateProperty: "4"}, N: 1}))
	requireCode(t, q.Check(Request{Kind: Query, Collection: 4, Properties: map[string]string{QueryRateProperty: "0"}, N: 1}),
		errcode.QuotaExceeded, "quota exceeded[reason=rate type: DQLQuery]")
}

// TestForceDeny: limitWriting/limitReading.forceDeny and the databases'
// force-deny properties refuse with code 9 and Milvus's reasons.
func TestForceDeny(t *testing.T) {
	cfg := Defaults()
	cfg.LimitWriting.ForceDeny = true
	q, _ := newQuotas(t, cfg, nil)
	for _, k := range []Kind{Insert, Delete} {
		err := q.Check(Request{Kind: k, N: 1})
		requireCode(t, err, errcode.QuotaExceeded,
			"quota exceeded[reason=access has been disabled by the administrator: config force deny writing]")
		require.False(t, errcode.Status(err).GetRetriable())
	}
	require.NoError(t, q.Check(Request{Kind: Search, N: 1}))

	cfg = Defaults()
	cfg.LimitReading.ForceDeny = true
	q, _ = newQuotas(t, cfg, nil)
	requireCode(t, q.Check(Request{Kind: Query, N: 1}), errcode.QuotaExceeded,
		"quota exceeded[reason=access has been disabled by the administrator: config force deny reading]")
	require.NoError(t, q.Check(Request{Kind: Insert, N: 1}))

	q, _ = newQuotas(t, Defaults(), nil)
	w := map[string]string{DenyWritingProperty: "true"}
	requireCode(t, q.Check(Request{Kind: Insert, DBProperties: w, N: 1}), errcode.QuotaExceeded,
		"quota exceeded[reason=access has been disabled by the administrator: force deny writing in database properties]")
	require.NoError(t, q.Check(Request{Kind: Search, DBProperties: w, N: 1}))
	r := map[string]string{DenyReadingProperty: "True"}
	requireCode(t, q.Check(Request{Kind: Search, DBProperties: r, N: 1}), errcode.QuotaExceeded,
		"quota exceeded[reason=access has been disabled by the administrator: force deny reading in database properties]")

	// quotaAndLimits.enabled false turns all of it off.
	cfg.Enabled = false
	q, _ = newQuotas(t, cfg, nil)
	require.NoError(t, q.Check(Request{Kind: Query, N: 1}))
}

func TestConfigValidate(t *testing.T) {
	require.NoError(t, Defaults().Validate())
	for _, tc := range []struct {
		name   string
		tweak  func(*MemProtection)
		reason string
	}{
		{"low above high", func(m *MemProtection) { m.LowWaterLevel = 0.96 }, "lowWaterLevel 0.96 is above highWaterLevel 0.95"},
		{"level over 1", func(m *MemProtection) { m.HighWaterLevel = 1.5 }, "water levels must be in (0, 1]"},
		{"negative limit", func(m *MemProtection) { m.MemoryLimit = -1 }, "memoryLimit must not be negative"},
		{"no interval", func(m *MemProtection) { m.CheckInterval = 0 }, "checkInterval must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Defaults()
			tc.tweak(&cfg.LimitWriting.MemProtection)
			require.ErrorContains(t, cfg.Validate(), tc.reason)
			_, err := New(cfg, nil)
			require.Error(t, err)
		})
	}
}
