// Package tso issues hybrid timestamps and IDs, as Milvus's root coordinator
// does.
//
// # Hybrid timestamps
//
// A timestamp is a uint64: the physical Unix time in milliseconds shifted
// left by LogicalBits (18), OR a logical counter that orders the timestamps
// handed out within one millisecond:
//
//	ts = physicalMs<<18 | logical   (logical < 1<<18)
//
// ComposeTS and ParseTS convert. Timestamps from one Allocator are strictly
// increasing, also across restarts over the same store.
//
// # Reserved window
//
// The Allocator never hands out a timestamp whose physical part exceeds a
// bound it has saved in the meta store. When it needs to, it saves a new
// bound, max(physical, now) + SaveInterval, before returning; on start it
// reads the bound and begins strictly above it. So a restarted allocator
// (even one whose wall clock went backwards) never repeats or reorders a
// timestamp, and the store is written at most about once per SaveInterval.
//
// Saves are guarded with IfEquals on the previously read bound (IfAbsent on
// first use), so a second allocator on the same key makes the older one fail
// with an error wrapping ErrFenced instead of issuing overlapping timestamps.
//
// Stored format: the value at Config.Key is the bound in Unix milliseconds,
// 8 bytes big-endian.
//
// # What is read is checked
//
// A saved bound is the base of every later timestamp and ID, so New refuses
// (ErrCorrupt, naming the key) one it could not have written: negative,
// above MaxPhysical, or more than Config.MaxAhead (default 24h) ahead of the
// wall clock. A legitimate bound is at most SaveInterval ahead; one a day
// ahead is a flipped bit or a clock set back by more than a day (then fix
// the clock, or wait). Allocate never hands out a timestamp whose physical
// part exceeds MaxPhysical (2^45-1 ms), so every timestamp and ID fits an
// int64 and is positive; past it, Allocate fails with ErrExhausted instead
// of wrapping.
//
// # IDs
//
// IDs (collection, partition, segment, row IDs for auto-ID) come from a
// second Allocator over the key "idTimestamp" (IDKey), as in Milvus: an ID
// is a TSO-shaped int64, unique and increasing. AllocateIDs returns the
// first of n consecutive IDs.
package tso
