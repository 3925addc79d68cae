// Package quota enforces Milvus's quotaAndLimits on the requests that read
// and write rows: token-bucket rate limits for DML (insert and upsert bytes,
// delete bytes per second) and DQL (searched vectors, queries per second) at
// the cluster, database and collection levels, forced denial of writes or
// reads, and memory-based write protection.
//
// A Limiter is Milvus's token bucket with its "punishment" rule: a request is
// admitted while the bucket holds any token at all (tokens ≥ 0) and then
// takes all it needs, which may leave the bucket in debt; later requests wait
// for the refill to pay the debt back. The bucket holds at most one second
// of tokens. A request is checked at every level from the cluster down to its
// collection; when a lower level refuses it, the tokens the higher levels
// took are given back.
//
// Refusals carry Milvus's codes: a rate limit is code 8 (RateLimit,
// retriable, so SDKs back off and retry), a denial is code 9
// (QuotaExceeded, not retriable) with the reason Milvus gives ("memory quota
// exceeded, please allocate more resources", "access has been disabled by
// the administrator").
//
// Memory protection (Watcher) compares the process's memory, as the Go
// runtime has it mapped, with a limit: the configured one, else the cgroup's
// memory.max, else the machine's memory. Above highWaterLevel it denies
// writes; it admits them again once the use falls under lowWaterLevel.
// Between the two it scales any finite DML rate down in proportion, as
// Milvus's quota center does.
//
// Nothing here is durable: limiters start full at every start.
package quota
