// Package rpc is Strata's internal RPC transport: the gRPC server and client
// options every role uses when the roles run as separate processes
// (`strata run ROLE`). The services themselves (their protos under proto/,
// generated code in internal/rpcpb, adapters such as internal/rpc/queryrpc)
// are thin; what they share lives here:
//
//   - Errors. This is the only place Go errors become gRPC statuses and back
//     (house rule 5). A handler returns an ordinary error; the server's
//     interceptor turns it into a gRPC status whose details carry the Milvus
//     status (commonpb.Status: merr code, reason, retriable), and the
//     client's interceptor turns that back into an *errcode.Error with the
//     same code and message. So the proxy answers the SDK with the code and
//     message it would have given with the in-process wiring. Context
//     errors travel as codes.Canceled and codes.DeadlineExceeded and come
//     back satisfying errors.Is(err, context.Canceled / DeadlineExceeded).
//     See StatusOf and ErrorOf.
//
//   - Deadlines. Every call carries one: the client sets
//     ClientConfig.Timeout on a context that has none, gRPC propagates it
//     (grpc-timeout), and the server refuses a call that arrives without
//     one (codes.InvalidArgument), so no handler runs unbounded.
//
//   - Retries. The client retries a call that failed with codes.Unavailable
//     (the peer could not be reached or is shutting down) or with a
//     retriable Milvus code (RetriableCode), at most
//     ClientConfig.MaxAttempts times in all, sleeping an exponential
//     backoff with full jitter between attempts (BackoffBase doubling up to
//     BackoffMax), never past the call's deadline. Every method of every
//     internal service must therefore be idempotent, or be called with
//     NoRetry (one attempt); the service's proto says which.
//
//   - Connections. Pool keeps one *grpc.ClientConn per peer address, made
//     on first use and closed with the pool.
//
//   - Logging. Each served call is logged at debug level (method, peer,
//     duration, gRPC code, Milvus code); a handler panic is recovered,
//     logged at error level and answered as codes.Internal.
//
// docs/design/rpc.md describes the services, the versioning rule and the
// status mapping.
package rpc
