package proxy

import "github.com/strata-db/strata/internal/errcode"

// Request limits, at Milvus 2.6's defaults (quotaAndLimits.limits.*), with
// Milvus's error codes and messages. Schema and catalog limits (names,
// fields, dimensions, partitions, shards, databases) are checked by the root
// coordinator (internal/rootcoord).
const (
	// MaxNQ bounds the query vectors of one search (quotaAndLimits.limits.nq).
	MaxNQ = 16384
	// MaxTopK bounds topk, offset and their sum in a search
	// (quotaAndLimits.limits.topK).
	MaxTopK = 16384
	// MaxQueryResultWindow bounds offset+limit of a query
	// (quotaAndLimits.limits.maxQueryResultWindow).
	MaxQueryResultWindow = 16384
	// MaxGroupSize bounds group_size of a grouping search
	// (quotaAndLimits.limits.maxGroupSize).
	MaxGroupSize = 10
)

// checkNQ checks the number of query vectors of a search.
func checkNQ(nq int) error {
	if nq <= 0 || nq > MaxNQ {
		return errcode.InvalidParam("nq [%d] is invalid, nq (number of search vector per search request) should be in range [1, %d], but got %d",
			nq, MaxNQ, nq)
	}
	return nil
}

// checkTopK checks a search's topk, offset and their sum.
func checkTopK(topk, offset int) error {
	if topk <= 0 || topk > MaxTopK {
		return errcode.InvalidParam("topk [%d] is invalid, it should be in range [1, %d], but got %d", topk, MaxTopK, topk)
	}
	if offset != 0 && (offset < 0 || offset > MaxTopK) {
		return errcode.InvalidParam("offset [%d] is invalid, it should be in range [1, %d], but got %d", offset, MaxTopK, offset)
	}
	if n := topk + offset; n > MaxTopK {
		return errcode.InvalidParam("offset+topk [%d] is invalid, it should be in range [1, %d], but got %d", n, MaxTopK, n)
	}
	return nil
}

// checkQueryWindow checks a query's offset+limit (limit < 0: no limit).
func checkQueryWindow(offset, limit int) error {
	if limit < 0 {
		return nil
	}
	if n := offset + limit; n > MaxQueryResultWindow {
		return errcode.InvalidParam("invalid max query result window, (offset+limit) should be in range [1, %d], but got %d",
			MaxQueryResultWindow, n)
	}
	return nil
}

// checkGroupSize checks a grouping search's group_size.
func checkGroupSize(n int) error {
	if n <= 0 {
		return errcode.InvalidParam("input group size:%d is negative, failed to do search_groupby", n)
	}
	if n > MaxGroupSize {
		return errcode.InvalidParam("input group size:%d exceeds configured max group size:%d", n, MaxGroupSize)
	}
	return nil
}

// checkRequestSize checks the size of a write request against the limit
// (Config.MaxRequestBytes, Milvus's proxy gRPC receive limit of 64 MiB).
// Milvus answers code 1102 (parameter too large) to a write over its size
// limit.
func checkRequestSize(n, limit int) error {
	if n > limit {
		return errcode.New(errcode.ParameterTooLarge, "the request is %d bytes, over the limit of %d bytes: parameter too large", n, limit)
	}
	return nil
}
