package proxy

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/errcode"
)

// TestRequestLimits: each request limit at Milvus 2.6's default, just under
// (accepted) and just over (refused with Milvus's code and message).
func TestRequestLimits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		under  error
		over   error
		code   int32
		reason string
	}{
		{
			"nq 16384", checkNQ(16384), checkNQ(16385), errcode.IllegalArgument,
			"nq [16385] is invalid, nq (number of search vector per search request) should be in range [1, 16384], but got 16385: invalid parameter",
		},
		{
			"nq 0", checkNQ(1), checkNQ(0), errcode.IllegalArgument,
			"nq [0] is invalid, nq (number of search vector per search request) should be in range [1, 16384], but got 0: invalid parameter",
		},
		{
			"topk 16384", checkTopK(16384, 0), checkTopK(16385, 0), errcode.IllegalArgument,
			"topk [16385] is invalid, it should be in range [1, 16384], but got 16385: invalid parameter",
		},
		{
			"topk 0", checkTopK(1, 0), checkTopK(0, 0), errcode.IllegalArgument,
			"topk [0] is invalid, it should be in range [1, 16384], but got 0: invalid parameter",
		},
		{
			"offset 16384", checkTopK(1, 16383), checkTopK(1, 16385), errcode.IllegalArgument,
			"offset [16385] is invalid, it should be in range [1, 16384], but got 16385: invalid parameter",
		},
		{
			"offset+topk 16384", checkTopK(8192, 8192), checkTopK(8192, 8193), errcode.IllegalArgument,
			"offset+topk [16385] is invalid, it should be in range [1, 16384], but got 16385: invalid parameter",
		},
		{
			"query offset+limit 16384", checkQueryWindow(16000, 384), checkQueryWindow(16000, 385), errcode.IllegalArgument,
			"invalid max query result window, (offset+limit) should be in range [1, 16384], but got 16385: invalid parameter",
		},
		{
			"group_size 10", checkGroupSize(10), checkGroupSize(11), errcode.IllegalArgument,
			"input group size:11 exceeds configured max group size:10: invalid parameter",
		},
		{
			"request 64 MiB", checkRequestSize(64<<20, Defaults().MaxRequestBytes), checkRequestSize(64<<20+1, Defaults().MaxRequestBytes),
			errcode.ParameterTooLarge, "the request is 67108865 bytes, over the limit of 67108864 bytes: parameter too large",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, tc.under)
			require.Error(t, tc.over)
			require.Equal(t, tc.code, errcode.CodeOf(tc.over))
			require.Equal(t, tc.reason, tc.over.Error())
		})
	}
	require.NoError(t, checkQueryWindow(16385, -1), "a query without a limit has no window")
}
