// Package errcode defines the coded errors Strata returns to clients.
//
// Components return *Error (or wrap one with %w) for anything a client
// caused or should see; the API layer turns it into a Milvus Status with both
// `code` (merr code) and the legacy `error_code` set, as every SDK expects.
// Errors without a code become code 5 ("unexpected error").
package errcode

import (
	"errors"
	"fmt"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
)

// Milvus merr codes that Strata uses.
const (
	Unexpected int32 = 5
	RateLimit  int32 = 8
	// QuotaExceeded is Milvus's ErrServiceQuotaExceeded: writes or reads
	// denied by a quota (memory protection, force deny); not retriable.
	QuotaExceeded       int32 = 9
	CollectionNotFound  int32 = 100
	CollectionNotLoaded int32 = 101
	CollectionNumLimit  int32 = 102
	CollectionLoaded    int32 = 104
	SchemaMismatch      int32 = 109
	PartitionNotFound   int32 = 200
	PartitionNotLoaded  int32 = 201
	// GeneralCapacityExceeded is Milvus's ErrGeneralCapacityExceeded: the
	// catalog's partitions × shards would pass rootCoord.maxGeneralCapacity.
	GeneralCapacityExceeded int32 = 250
	// ResourceGroupNodeNotEnough is Milvus's ErrResourceGroupNodeNotEnough:
	// a load asks for more replicas than there are query nodes.
	ResourceGroupNodeNotEnough int32 = 304
	// ChannelNotFound is Milvus's ErrChannelNotFound: the data
	// coordinator refuses a report of a data node that no longer owns the
	// vchannel (catalog.StaleEpoch).
	ChannelNotFound int32 = 500
	// ChannelNotAvailable is Milvus's ErrChannelNotAvailable: no shard
	// delegator serves a vchannel of a loaded collection.
	ChannelNotAvailable int32 = 503
	IndexNotFound       int32 = 700
	DatabaseNotFound    int32 = 800
	DatabaseNumLimit    int32 = 801
	DatabaseInvalidName int32 = 802
	IllegalArgument     int32 = 1100
	ParameterMissing    int32 = 1101
	ParameterTooLarge   int32 = 1102
	FieldInvalidName    int32 = 1701
	// Segcore is Milvus's ErrSegcore: what the query engine refuses, such
	// as a search on a vector field that is not loaded.
	Segcore         int32 = 2000
	ServiceNotReady int32 = 1
	AliasNotFound   int32 = 1600
	// AliasNameConflict is Milvus's ErrAliasCollectionNameConfilct: an
	// alias named like a collection, or a collection named like an alias.
	AliasNameConflict int32 = 1601
	// AliasAlreadyExists is Milvus's ErrAliasAlreadyExist: the alias points
	// to another collection.
	AliasAlreadyExists   int32 = 1602
	AuthenticationFailed int32 = 1400
	// The REST layer's codes: a body or parameter that is not valid JSON
	// for the action, a required parameter that is missing, rows that do
	// not fit the schema, a result that cannot be encoded, a bad primary
	// key.
	IncorrectParameterFormat int32 = 1801
	MissingRequiredParameter int32 = 1802
	InvalidInsertData        int32 = 1804
	InvalidSearchResult      int32 = 1805
	CheckPrimaryKey          int32 = 1806
	// HTTPRateLimit is the REST layer's answer to a request the quotas
	// refuse (Milvus's merr.ErrHTTPRateLimit, "request is rejected by
	// limiter").
	HTTPRateLimit int32 = 1807
	// NeedAuthenticate is the REST layer's answer to a missing or bad
	// credential (Milvus's merr.ErrNeedAuthenticate).
	NeedAuthenticate int32 = 1800
	// ImportFailed is Milvus's ErrImportFailed: a bulk import request or
	// job that cannot go on.
	ImportFailed int32 = 2100
)

// Error is a client-visible error with a Milvus merr code.
type Error struct {
	// Code is the merr code (status.code).
	Code int32
	// Msg is the human-readable reason.
	Msg string
}

// Error implements error.
func (e *Error) Error() string { return e.Msg }

// New returns an *Error with code and a formatted message.
func New(code int32, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Invalid returns an IllegalArgument (1100) error.
func Invalid(format string, args ...any) *Error {
	return New(IllegalArgument, format, args...)
}

// InvalidParam returns an IllegalArgument (1100) error worded as Milvus's
// merr.WrapErrParameterInvalidMsg words it: the reason, then ": invalid parameter".
func InvalidParam(format string, args ...any) *Error {
	return New(IllegalArgument, "%s: invalid parameter", fmt.Sprintf(format, args...))
}

// CodeOf returns the merr code carried by err (Unexpected when it has none, 0 for nil).
func CodeOf(err error) int32 {
	if err == nil {
		return 0
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Unexpected
}

// LegacyCode maps a merr code to the deprecated commonpb.ErrorCode enum that
// older clients still test (pymilvus checks both).
func LegacyCode(code int32) commonpb.ErrorCode {
	switch code {
	case 0:
		return commonpb.ErrorCode_Success
	case CollectionNotFound:
		return commonpb.ErrorCode_CollectionNotExists
	case IndexNotFound:
		return commonpb.ErrorCode_IndexNotExist
	case SchemaMismatch:
		return commonpb.ErrorCode_SchemaMismatch
	case RateLimit:
		return commonpb.ErrorCode_RateLimit
	case QuotaExceeded:
		return commonpb.ErrorCode_ForceDeny
	case IllegalArgument:
		return commonpb.ErrorCode_IllegalArgument
	case PartitionNotFound:
		return commonpb.ErrorCode_MetaFailed
	default:
		return commonpb.ErrorCode_UnexpectedError
	}
}

// serviceUnavailable is merr ErrServiceUnavailable (rpc.CodeServiceUnavailable):
// a peer process (the coordinator, a query node) could not be reached. As
// in Milvus, it is retriable.
const serviceUnavailable int32 = 2

// Status converts err into a Milvus Status (success for nil); a rate limit
// and an unreachable peer are marked retriable.
func Status(err error) *commonpb.Status {
	if err == nil {
		return &commonpb.Status{}
	}
	code := CodeOf(err)
	return &commonpb.Status{Code: code, ErrorCode: LegacyCode(code), Reason: err.Error(), Retriable: code == RateLimit || code == serviceUnavailable}
}
