package quota

import (
	"errors"
	"fmt"
	"time"
)

// Config is the `quota` section of the configuration: the keys of Milvus's
// quotaAndLimits that apply to a single process, with Milvus 2.6's defaults.
// A rate of -1 (or any negative value) is unlimited; a rate of 0 admits
// nothing, as in Milvus.
type Config struct {
	// Enabled turns every quota and limit on or off
	// (quotaAndLimits.enabled, true).
	Enabled bool `json:"enabled"`
	// DML limits the insert/upsert and delete rates (quotaAndLimits.dml).
	DML DMLConfig `json:"dml"`
	// DQL limits the search and query rates (quotaAndLimits.dql).
	DQL DQLConfig `json:"dql"`
	// LimitWriting denies writes (quotaAndLimits.limitWriting).
	LimitWriting LimitWriting `json:"limitWriting"`
	// LimitReading denies reads (quotaAndLimits.limitReading).
	LimitReading LimitReading `json:"limitReading"`
}

// Rates is one rate at its three levels: the whole server, each database,
// each collection (a collection's properties may override the last).
type Rates struct {
	// Max is the server-wide rate.
	Max float64 `json:"max"`
	// DB is the rate of each database.
	DB Level `json:"db"`
	// Collection is the rate of each collection.
	Collection Level `json:"collection"`
}

// Level is the rate of one level.
type Level struct {
	// Max is the rate.
	Max float64 `json:"max"`
}

// DMLConfig limits writes, in MB/s of request size (Milvus measures the
// size of the request message).
type DMLConfig struct {
	// Enabled turns the DML rates on (false).
	Enabled bool `json:"enabled"`
	// InsertRate limits insert and upsert (MB/s).
	InsertRate Rates `json:"insertRate"`
	// DeleteRate limits delete (MB/s).
	DeleteRate Rates `json:"deleteRate"`
}

// DQLConfig limits reads.
type DQLConfig struct {
	// Enabled turns the DQL rates on (false).
	Enabled bool `json:"enabled"`
	// SearchRate limits the query vectors searched per second (a hybrid
	// search counts the vectors of all its sub-searches).
	SearchRate Rates `json:"searchRate"`
	// QueryRate limits the queries per second.
	QueryRate Rates `json:"queryRate"`
}

// LimitWriting denies writes by configuration or when memory runs short.
type LimitWriting struct {
	// ForceDeny refuses every insert, upsert and delete (false).
	ForceDeny bool `json:"forceDeny"`
	// MemProtection refuses writes when the process nears its memory limit.
	MemProtection MemProtection `json:"memProtection"`
}

// MemProtection is memory-based write protection
// (quotaAndLimits.limitWriting.memProtection; Strata runs the data and the
// query node in one process, so one pair of water levels serves both of
// Milvus's).
type MemProtection struct {
	// Enabled turns the protection on (true).
	Enabled bool `json:"enabled"`
	// LowWaterLevel is the share of the memory limit under which writes
	// flow freely again (0.85).
	LowWaterLevel float64 `json:"lowWaterLevel"`
	// HighWaterLevel is the share of the memory limit above which writes
	// are refused (0.95).
	HighWaterLevel float64 `json:"highWaterLevel"`
	// MemoryLimit is the memory, in bytes, the levels are shares of; 0
	// takes the cgroup's memory.max, else the machine's memory.
	MemoryLimit int64 `json:"memoryLimit"`
	// CheckInterval is how often the process's memory is read again
	// (Milvus's quotaCenterCollectInterval, 3s).
	CheckInterval time.Duration `json:"checkInterval"`
}

// LimitReading denies reads by configuration.
type LimitReading struct {
	// ForceDeny refuses every search and query (false).
	ForceDeny bool `json:"forceDeny"`
}

func unlimited() Rates { return Rates{Max: -1, DB: Level{Max: -1}, Collection: Level{Max: -1}} }

// Defaults returns Milvus 2.6's defaults: quotas on, every rate unlimited,
// memory protection at 85% / 95% of the memory limit.
func Defaults() Config {
	return Config{
		Enabled: true,
		DML:     DMLConfig{InsertRate: unlimited(), DeleteRate: unlimited()},
		DQL:     DQLConfig{SearchRate: unlimited(), QueryRate: unlimited()},
		LimitWriting: LimitWriting{MemProtection: MemProtection{
			Enabled: true, LowWaterLevel: 0.85, HighWaterLevel: 0.95, CheckInterval: 3 * time.Second,
		}},
	}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	var errs []error
	m := c.LimitWriting.MemProtection
	switch {
	case m.LowWaterLevel <= 0 || m.LowWaterLevel > 1 || m.HighWaterLevel <= 0 || m.HighWaterLevel > 1:
		errs = append(errs, fmt.Errorf("quota: memProtection water levels must be in (0, 1], got low %v, high %v", m.LowWaterLevel, m.HighWaterLevel))
	case m.LowWaterLevel > m.HighWaterLevel:
		errs = append(errs, fmt.Errorf("quota: memProtection lowWaterLevel %v is above highWaterLevel %v", m.LowWaterLevel, m.HighWaterLevel))
	}
	if m.MemoryLimit < 0 {
		errs = append(errs, fmt.Errorf("quota: memProtection memoryLimit must not be negative, got %d", m.MemoryLimit))
	}
	if m.CheckInterval <= 0 {
		errs = append(errs, errors.New("quota: memProtection checkInterval must be positive"))
	}
	return errors.Join(errs...)
}
