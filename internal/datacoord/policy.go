package datacoord

import (
	"fmt"
	"sort"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/objstore"
	"github.com/strata-db/strata/internal/storage"
)

// Config configures the data coordinator.
type Config struct {
	// SegmentMaxSize is the target size of a segment in bytes (Milvus segment.maxSize).
	SegmentMaxSize int64 `json:"segmentMaxSize"`
	// SealProportion seals a growing segment at SegmentMaxSize × SealProportion.
	SealProportion float64 `json:"sealProportion"`
	// MaxIdle seals a growing segment that received no rows for this long.
	MaxIdle time.Duration `json:"maxIdle"`
	// MaxLife seals a growing segment this old.
	MaxLife time.Duration `json:"maxLife"`
	// GrowingMemoryLimit seals the largest growing segments while the estimated
	// bytes of all growing segments exceed it (memory pressure).
	GrowingMemoryLimit int64 `json:"growingMemoryLimit"`
	// CheckInterval is how often seal policies, compaction triggers and WAL truncation run.
	CheckInterval time.Duration `json:"checkInterval"`
	// Compaction tunes automatic compaction.
	Compaction CompactionConfig `json:"compaction"`

	// RootPath is the object-storage root the data nodes write under
	// ("files"); garbage collection lists and deletes keys below it only.
	// The app sets it (app.Config.RootPath) to the data nodes' root.
	RootPath string `json:"-"`
	// GCInterval is how often garbage collection runs (checked every
	// CheckInterval, so it runs at most that often).
	GCInterval time.Duration `json:"gcInterval"`
	// DroppedRetention is how long the files of a Dropped segment are kept
	// after it was dropped, so that readers holding it (a query node that has
	// not released it yet) can finish; then its files and its record are
	// deleted. Milvus keeps them for gc.dropTolerance (3 h); Strata's default
	// is 1 h, which already outlasts any query.
	DroppedRetention time.Duration `json:"droppedRetention"`
	// OrphanRetention is the minimum age of a file that no segment record or
	// index task references before it is deleted. Syncs, index builds and
	// compactions write their files before their meta-store commit, so it must
	// be far longer than any of them can take (index builds hold a lease of
	// IndexLease). Milvus' counterpart is gc.missingTolerance; Strata's
	// default is 1 h.
	OrphanRetention time.Duration `json:"orphanRetention"`
}

// Defaults returns the default configuration (Milvus defaults where they exist).
func Defaults() Config {
	return Config{
		SegmentMaxSize:     1024 << 20,
		SealProportion:     0.12,
		MaxIdle:            10 * time.Minute,
		MaxLife:            24 * time.Hour,
		GrowingMemoryLimit: 2 << 30,
		CheckInterval:      2 * time.Second,
		Compaction:         DefaultCompaction(),
		RootPath:           storage.DefaultRootPath,
		GCInterval:         time.Minute,
		DroppedRetention:   time.Hour,
		OrphanRetention:    time.Hour,
	}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case c.SegmentMaxSize <= 0:
		return fmt.Errorf("datacoord: segment max size must be positive")
	case c.SealProportion <= 0 || c.SealProportion > 1:
		return fmt.Errorf("datacoord: seal proportion must be in (0, 1]")
	case c.MaxIdle <= 0 || c.MaxLife <= 0 || c.CheckInterval <= 0:
		return fmt.Errorf("datacoord: durations must be positive")
	case c.GrowingMemoryLimit <= 0:
		return fmt.Errorf("datacoord: growing memory limit must be positive")
	case c.GCInterval <= 0 || c.DroppedRetention <= 0 || c.OrphanRetention <= 0:
		return fmt.Errorf("datacoord: gc interval and retentions must be positive")
	case c.RootPath == "" || objstore.ValidateKey(c.RootPath) != nil:
		return fmt.Errorf("datacoord: root path %q is not a valid object key", c.RootPath)
	}
	return c.Compaction.Validate()
}

// Validate checks the compaction settings.
func (c CompactionConfig) Validate() error {
	switch {
	case c.L0Count < 1:
		return fmt.Errorf("datacoord: compaction l0Count must be at least 1, got %d", c.L0Count)
	case c.L0MaxAge <= 0:
		return fmt.Errorf("datacoord: compaction l0MaxAge must be positive, got %s", c.L0MaxAge)
	case c.L0Size < 0:
		return fmt.Errorf("datacoord: compaction l0Size must not be negative, got %d", c.L0Size)
	case c.SmallProportion < 0:
		return fmt.Errorf("datacoord: compaction smallProportion must not be negative, got %g", c.SmallProportion)
	case c.MinSmallSegments < 2:
		return fmt.Errorf("datacoord: compaction minSmallSegments must be at least 2 (a merge has two inputs), got %d", c.MinSmallSegments)
	case c.DeletedRatio <= 0:
		return fmt.Errorf("datacoord: compaction deletedRatio must be positive, got %g", c.DeletedRatio)
	case c.ExpiryGrace < 0:
		return fmt.Errorf("datacoord: compaction expiryGrace must not be negative, got %s", c.ExpiryGrace)
	case c.ClusteringMaxRows < 0:
		return fmt.Errorf("datacoord: compaction clusteringMaxRows must not be negative, got %d", c.ClusteringMaxRows)
	}
	return nil
}

// growingStat is what the seal policy knows of one growing segment.
type growingStat struct {
	ID        int64
	Rows      int64
	MaxRows   int64
	RowSize   int64
	Full      bool // turned rows away for lack of room
	CreatedAt time.Time
	LastWrite time.Time
}

// sealPolicy decides which growing segments to seal now. It is pure: the
// caller passes a snapshot and the time.
func sealPolicy(cfg Config, segs []growingStat, now time.Time) []int64 {
	var out []int64
	sealed := map[int64]bool{}
	var total int64
	for _, s := range segs {
		switch {
		case (s.Rows >= s.MaxRows || s.Full) && s.Rows > 0:
			sealed[s.ID] = true
		case s.Rows > 0 && now.Sub(s.LastWrite) >= cfg.MaxIdle:
			sealed[s.ID] = true
		case s.Rows > 0 && now.Sub(s.CreatedAt) >= cfg.MaxLife:
			sealed[s.ID] = true
		default:
			total += s.Rows * s.RowSize
		}
	}
	if total > cfg.GrowingMemoryLimit {
		rest := append([]growingStat(nil), segs...)
		sort.Slice(rest, func(i, j int) bool { return rest[i].Rows*rest[i].RowSize > rest[j].Rows*rest[j].RowSize })
		for _, s := range rest {
			if total <= cfg.GrowingMemoryLimit {
				break
			}
			if !sealed[s.ID] && s.Rows > 0 {
				sealed[s.ID] = true
				total -= s.Rows * s.RowSize
			}
		}
	}
	for _, s := range segs {
		if sealed[s.ID] {
			out = append(out, s.ID)
		}
	}
	return out
}

// transitions is the segment lifecycle: allowed[from][to].
var transitions = map[catalog.SegmentState]map[catalog.SegmentState]bool{
	catalog.SegmentGrowing: {catalog.SegmentSealed: true, catalog.SegmentFlushed: true, catalog.SegmentDropped: true},
	catalog.SegmentSealed:  {catalog.SegmentFlushed: true, catalog.SegmentDropped: true},
	catalog.SegmentFlushed: {catalog.SegmentDropped: true},
}

// canTransition reports whether a segment may move from one state to another.
func canTransition(from, to catalog.SegmentState) bool { return transitions[from][to] }
