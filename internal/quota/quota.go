package quota

import (
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/strata-db/strata/internal/errcode"
)

// Kind is what a request does, as Milvus's rate types name it.
type Kind int

// The kinds of request the limiters check.
const (
	// Insert is an insert or an upsert (DMLInsert), counted in bytes.
	Insert Kind = iota
	// Delete is a delete (DMLDelete), counted in bytes.
	Delete
	// Search is a search or hybrid search (DQLSearch), counted in query
	// vectors.
	Search
	// Query is a query (DQLQuery), counted as 1.
	Query
	numKinds
)

var kindNames = [numKinds]string{"DMLInsert", "DMLDelete", "DQLSearch", "DQLQuery"}

// String returns Milvus's name of the rate type ("DMLInsert").
func (k Kind) String() string {
	if k < 0 || k >= numKinds {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

func (k Kind) write() bool { return k == Insert || k == Delete }

// Collection property keys that override a collection's rate (Milvus's
// common.Collection*RateMaxKey): DML in MB/s, search in vectors/s, query in
// queries/s.
const (
	InsertRateProperty = "collection.insertRate.max.mb"
	DeleteRateProperty = "collection.deleteRate.max.mb"
	SearchRateProperty = "collection.searchRate.max.vps"
	QueryRateProperty  = "collection.queryRate.max.qps"
)

// Database property keys that deny writes or reads in a database (Milvus's
// common.DatabaseForceDeny*Key).
const (
	DenyWritingProperty = "database.force.deny.writing"
	DenyReadingProperty = "database.force.deny.reading"
)

var rateProperty = [numKinds]string{InsertRateProperty, DeleteRateProperty, SearchRateProperty, QueryRateProperty}

// Request is one request to admit.
type Request struct {
	// Kind is what the request does.
	Kind Kind
	// DB is the database's name and DBProperties its properties.
	DB           string
	DBProperties map[string]string
	// Collection is the collection's ID and Properties its properties.
	Collection int64
	Properties map[string]string
	// N is the request's cost: the request message's size in bytes for
	// DML, its query vectors for a search, 1 for a query.
	N int
}

// Recorder counts checked requests (metrics.RateLimit).
type Recorder interface {
	RateLimited(msgType string, admitted bool)
}

type limiters [numKinds]*Limiter

func newLimiters() *limiters {
	var l limiters
	for i := range l {
		l[i] = NewLimiter(Inf)
	}
	return &l
}

// Quotas admits or refuses requests by the configured quotas and limits.
// It is safe for concurrent use.
type Quotas struct {
	cfg Config
	mem *Watcher
	rec Recorder
	now func() time.Time

	mu      sync.Mutex
	cluster *limiters
	dbs     map[string]*limiters
	cols    map[int64]*limiters
}

// New returns the quotas of cfg, recording on rec (nil: not recorded).
func New(cfg Config, rec Recorder) (*Quotas, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Quotas{
		cfg: cfg, mem: NewWatcher(cfg.LimitWriting.MemProtection), rec: rec, now: time.Now,
		cluster: newLimiters(), dbs: map[string]*limiters{}, cols: map[int64]*limiters{},
	}, nil
}

// Memory returns the memory watcher.
func (q *Quotas) Memory() *Watcher { return q.mem }

// Check admits r or returns why not: code 9 (QuotaExceeded) when writes or
// reads are denied, code 8 (RateLimit, retriable) when a rate is exhausted.
// A nil Quotas admits everything.
func (q *Quotas) Check(r Request) error {
	if q == nil || !q.cfg.Enabled || r.N <= 0 || r.Kind < 0 || r.Kind >= numKinds {
		return nil
	}
	err := q.check(r)
	if q.rec != nil {
		q.rec.RateLimited(r.Kind.String(), err == nil)
	}
	return err
}

func (q *Quotas) check(r Request) error {
	now := q.now()
	factor := 1.0
	if r.Kind.write() {
		switch {
		case q.cfg.LimitWriting.ForceDeny:
			return denied(forceDenied, "config force deny writing")
		case parseBool(r.DBProperties[DenyWritingProperty]):
			return denied(forceDenied, "force deny writing in database properties")
		}
		if factor = q.mem.Factor(now); factor <= 0 {
			return denied("memory quota exceeded, please allocate more resources", "force deny writing for memory quota exceeded")
		}
	} else {
		switch {
		case q.cfg.LimitReading.ForceDeny:
			return denied(forceDenied, "config force deny reading")
		case parseBool(r.DBProperties[DenyReadingProperty]):
			return denied(forceDenied, "force deny reading in database properties")
		}
	}
	levels := q.levels(r, now, factor)
	n := float64(r.N)
	for i, l := range levels {
		rate := l.Rate()
		var err error
		switch {
		case rate == 0:
			err = denied("", "rate type: "+r.Kind.String())
		case !l.AllowN(now, n):
			err = errcode.New(errcode.RateLimit,
				"request is rejected by grpc RateLimiter middleware, please retry later: rate limit exceeded[rate=%v]", rate)
		}
		if err != nil {
			for _, done := range levels[:i] {
				done.Cancel(n)
			}
			return err
		}
	}
	return nil
}

const forceDenied = "access has been disabled by the administrator"

// denied is Milvus's ErrServiceQuotaExceeded with the reason of a quota
// state: "quota exceeded[reason=<base>: <reason>]".
func denied(base, reason string) error {
	if base != "" {
		reason = base + ": " + reason
	}
	return errcode.New(errcode.QuotaExceeded, "quota exceeded[reason=%s]", reason)
}

// levels returns r's limiters from the cluster down to its collection, with
// their rates brought up to date (the configuration, the collection's
// properties and, for writes, the memory factor).
func (q *Quotas) levels(r Request, now time.Time, factor float64) []*Limiter {
	q.mu.Lock()
	db, ok := q.dbs[r.DB]
	if !ok {
		db = newLimiters()
		q.dbs[r.DB] = db
	}
	col, ok := q.cols[r.Collection]
	if !ok {
		col = newLimiters()
		q.cols[r.Collection] = col
	}
	q.mu.Unlock()
	rates := q.rates(r.Kind)
	collRate := rates.Collection.Max
	if v, ok := r.Properties[rateProperty[r.Kind]]; ok {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			collRate = f
		}
	}
	out := []*Limiter{q.cluster[r.Kind], db[r.Kind], col[r.Kind]}
	for i, rate := range []float64{rates.Max, rates.DB.Max, collRate} {
		out[i].SetRate(now, q.effective(r.Kind, rate, factor))
	}
	return out
}

// rates returns the configured rates of kind (all unlimited when its
// family is not enabled).
func (q *Quotas) rates(k Kind) Rates {
	switch {
	case k == Insert && q.cfg.DML.Enabled:
		return q.cfg.DML.InsertRate
	case k == Delete && q.cfg.DML.Enabled:
		return q.cfg.DML.DeleteRate
	case k == Search && q.cfg.DQL.Enabled:
		return q.cfg.DQL.SearchRate
	case k == Query && q.cfg.DQL.Enabled:
		return q.cfg.DQL.QueryRate
	}
	return unlimited()
}

// effective turns a configured rate into tokens per second: negative is
// unlimited, DML rates are MB/s of request bytes, scaled by the memory
// factor.
func (q *Quotas) effective(k Kind, rate, factor float64) float64 {
	if rate < 0 || math.IsInf(rate, 1) {
		return Inf
	}
	if k.write() {
		rate *= 1 << 20 * factor
	}
	return rate
}

func parseBool(s string) bool {
	b, err := strconv.ParseBool(s)
	return err == nil && b
}
