package rpc

import (
	"context"
	"errors"
	"fmt"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-db/strata/internal/errcode"
)

// Milvus merr codes the transport itself produces or retries (Milvus's
// pkg/util/merr numbering).
const (
	// CodeServiceUnavailable is merr ErrServiceUnavailable: the peer could
	// not be reached after every attempt.
	CodeServiceUnavailable int32 = 2
	// CodeTooManyRequests is merr ErrServiceTooManyRequests.
	CodeTooManyRequests int32 = 4
	// CodeUnimplemented is merr ErrServiceUnimplemented: the peer does not
	// serve the method (an older or newer version of the service).
	CodeUnimplemented int32 = 10
	// CodeResourceInsufficient is merr ErrServiceResourceInsufficient.
	CodeResourceInsufficient int32 = 12
)

// RetriableCode reports whether a call that failed with Milvus code code
// may be tried again on the same peer: the peer is not ready yet, is
// unavailable for now, or is short of workers or resources. Milvus marks
// these retriable too. A rate limit (8) is not retried here: it goes back
// to the client, which owns the backoff.
func RetriableCode(code int32) bool {
	switch code {
	case errcode.ServiceNotReady, CodeServiceUnavailable, CodeTooManyRequests, CodeResourceInsufficient:
		return true
	}
	return false
}

// grpcCode is the gRPC code a Milvus code travels under. Only tools that do
// not read the details (grpcurl, a load balancer) look at it; Strata's
// clients decode the Milvus status in the details.
func grpcCode(code int32) codes.Code {
	switch code {
	case errcode.ServiceNotReady, CodeServiceUnavailable:
		return codes.Unavailable
	case errcode.RateLimit, errcode.QuotaExceeded, CodeTooManyRequests, CodeResourceInsufficient:
		return codes.ResourceExhausted
	case errcode.CollectionNotFound, errcode.PartitionNotFound, errcode.IndexNotFound,
		errcode.DatabaseNotFound, errcode.AliasNotFound:
		return codes.NotFound
	case errcode.CollectionNotLoaded, errcode.PartitionNotLoaded, errcode.ChannelNotAvailable, errcode.ChannelNotFound:
		return codes.FailedPrecondition
	case errcode.IllegalArgument, errcode.ParameterMissing, errcode.ParameterTooLarge,
		errcode.FieldInvalidName, errcode.SchemaMismatch:
		return codes.InvalidArgument
	case CodeUnimplemented:
		return codes.Unimplemented
	}
	return codes.Unknown
}

// StatusOf converts a handler's error into the gRPC status error the
// server returns (nil for nil). Context errors become codes.Canceled and
// codes.DeadlineExceeded; every other error becomes the gRPC code of its
// Milvus code (errcode.CodeOf: 5 when it has none) with the Milvus status
// (code, legacy error_code, reason = err.Error(), retriable) as the
// status's one detail. An error that already is a gRPC status (from a
// nested call) passes unchanged.
func StatusOf(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	var gc codes.Code
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		gc = codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		gc = codes.Canceled
	default:
		gc = grpcCode(errcode.CodeOf(err))
	}
	ms := errcode.Status(err)
	ms.Retriable = ms.GetRetriable() || RetriableCode(ms.GetCode())
	st, derr := status.New(gc, err.Error()).WithDetails(ms)
	if derr != nil {
		// Only a message that cannot be marshalled fails here; the code and
		// message still travel.
		return status.Error(gc, err.Error())
	}
	return st.Err()
}

// Error is an error that came back from a peer: Error() is the peer's
// message, unchanged, and Unwrap gives the *errcode.Error with its Milvus
// code, or context.Canceled / context.DeadlineExceeded for a call that
// was cancelled or ran out of time, so errors.As and errors.Is work as
// they would on the in-process error.
type Error struct {
	// Method is the full gRPC method name ("/strata.querynode.v1.…/Search").
	Method string
	// Code is the gRPC code the call ended with.
	Code codes.Code
	msg  string
	// cause is an *errcode.Error or a context error.
	cause error
}

// Error implements error: the peer's message.
func (e *Error) Error() string { return e.msg }

// Unwrap returns the Milvus-coded error or the context error.
func (e *Error) Unwrap() error { return e.cause }

// ErrorOf converts the error a gRPC call returned into a Go error (nil for
// nil): an *Error that unwraps to an *errcode.Error carrying the Milvus
// code and reason of the status's details, or to the context error for
// codes.Canceled and codes.DeadlineExceeded. A status without a Milvus
// detail (the peer was unreachable, does not serve the method, or the
// message was too large) gets the code of its kind:
// CodeServiceUnavailable, CodeUnimplemented or 5, with the method named
// in the message.
func ErrorOf(method string, err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		// Not from gRPC at all (an interceptor's own error).
		return err
	}
	e := &Error{Method: method, Code: st.Code(), msg: st.Message()}
	if ms := milvusStatus(st); ms != nil && st.Code() != codes.Canceled && st.Code() != codes.DeadlineExceeded {
		e.msg = ms.GetReason()
		e.cause = &errcode.Error{Code: ms.GetCode(), Msg: ms.GetReason()}
		return e
	}
	switch st.Code() {
	case codes.Canceled:
		e.cause = context.Canceled
	case codes.DeadlineExceeded:
		e.cause = context.DeadlineExceeded
	case codes.Unavailable:
		e.msg = fmt.Sprintf("service unavailable: %s: %s", method, st.Message())
		e.cause = &errcode.Error{Code: CodeServiceUnavailable, Msg: e.msg}
	case codes.Unimplemented:
		e.msg = fmt.Sprintf("service unimplemented: %s: %s", method, st.Message())
		e.cause = &errcode.Error{Code: CodeUnimplemented, Msg: e.msg}
	default:
		e.msg = fmt.Sprintf("%s: %s: %s", method, st.Code(), st.Message())
		e.cause = &errcode.Error{Code: errcode.Unexpected, Msg: e.msg}
	}
	return e
}

// milvusStatus returns the Milvus status among st's details, if any.
func milvusStatus(st *status.Status) *commonpb.Status {
	for _, d := range st.Details() {
		if ms, ok := d.(*commonpb.Status); ok {
			return ms
		}
	}
	return nil
}

// retriable reports whether a call that ended with err (as the gRPC client
// returned it) may be tried again.
func retriable(err error) bool {
	st, ok := status.FromError(err)
	if !ok {
		return false
	}
	if ms := milvusStatus(st); ms != nil {
		return RetriableCode(ms.GetCode())
	}
	return st.Code() == codes.Unavailable
}
