package catalog

import (
	"strconv"
	"time"
)

// TTLProperty is the collection property holding its time to live in
// whole seconds (Milvus's "collection.ttl.seconds"; absent or 0: none).
const TTLProperty = "collection.ttl.seconds"

// TTL is the collection's time to live (0: none, also for a property that
// does not parse as a positive number of seconds).
func (c *Collection) TTL() time.Duration {
	v, ok := c.Properties[TTLProperty]
	if !ok {
		return 0
	}
	secs, err := strconv.ParseInt(v, 10, 64)
	if err != nil || secs <= 0 {
		return 0
	}
	return time.Duration(secs) * time.Second
}

// ExpireBefore is the TTL cut-off of a read at now: the hybrid timestamp
// (physical milliseconds << 18) before which rows were inserted too long
// ago to be visible; 0 (no cut-off) when ttl is 0.
func ExpireBefore(ttl time.Duration, now time.Time) uint64 {
	if ttl <= 0 {
		return 0
	}
	ms := now.Add(-ttl).UnixMilli()
	if ms <= 0 {
		return 0
	}
	return uint64(ms) << 18
}
