package rpc

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
)

// keepaliveTime is how long a client connection idles before it pings the
// peer, so that a dead peer is noticed without a call timing out.
const keepaliveTime = 30 * time.Second

// DialOptions returns the gRPC client options of internal RPC: plaintext
// transport, the message size bound, keepalive pings, and the client
// interceptor (deadline, retries with backoff, errors decoded by ErrorOf).
func DialOptions(cfg ClientConfig, logger *slog.Logger) []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(cfg.MaxMessageSize), grpc.MaxCallSendMsgSize(cfg.MaxMessageSize)),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: keepaliveTime, Timeout: 10 * time.Second, PermitWithoutStream: true}),
		grpc.WithChainUnaryInterceptor(clientInterceptor(cfg, logger)),
	}
}

// NoRetry is a call option that sends one call once, without the client's
// retries: for a call that is not idempotent, whose retry after a failure
// that left it unclear whether the peer applied it (an Unavailable after
// the request was sent) could apply it twice.
func NoRetry() grpc.CallOption { return noRetry{} }

// noRetry is NoRetry's option; gRPC itself ignores it.
type noRetry struct{ grpc.EmptyCallOption }

// clientInterceptor gives the call a deadline when it has none, retries it
// while it fails retriably (retriable) with jittered exponential backoff,
// and decodes the final error (ErrorOf): the last retriable failure when the
// deadline ends the retries, whether in a backoff or in an attempt.
func clientInterceptor(cfg ClientConfig, logger *slog.Logger) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
			defer cancel()
		}
		attempts := cfg.MaxAttempts
		for _, o := range opts {
			if _, ok := o.(noRetry); ok {
				attempts = 1
			}
		}
		var err, prev error
		for attempt := 1; ; attempt++ {
			err = invoker(ctx, method, req, reply, cc, opts...)
			if err != nil && prev != nil && cutShort(ctx, err) {
				// The deadline cut a retry short: the failure the retries
				// were for says more than the deadline does.
				err = prev
				break
			}
			if err == nil || attempt >= attempts || !retriable(err) {
				break
			}
			prev = err
			wait := Backoff(cfg, attempt)
			if dl, _ := ctx.Deadline(); time.Until(dl) <= wait {
				break // the next attempt could not finish in time
			}
			logger.DebugContext(ctx, "rpc retry", "method", method, "target", cc.Target(), "attempt", attempt,
				"wait", wait.String(), "err", err)
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return ErrorOf(method, err)
			case <-t.C:
			}
		}
		return ErrorOf(method, err)
	}
}

// cutShort reports whether an attempt's err is the call's own deadline or
// cancellation: the context says so, or the server (whose copy of the
// deadline may fire a moment before the client's) cancelled the stream.
func cutShort(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return true
	}
	switch status.Code(err) {
	case codes.DeadlineExceeded, codes.Canceled:
		return true
	}
	return false
}

// Backoff is the sleep after failed attempt n (1 = the first): drawn
// uniformly from [0, min(BackoffMax, BackoffBase·2^(n-1))).
func Backoff(cfg ClientConfig, n int) time.Duration {
	ceil := cfg.BackoffBase
	for i := 1; i < n && ceil < cfg.BackoffMax; i++ {
		ceil *= 2
	}
	ceil = min(ceil, cfg.BackoffMax)
	if ceil <= 0 {
		return 0
	}
	return rand.N(ceil)
}
