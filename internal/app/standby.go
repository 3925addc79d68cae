package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-db/strata/internal/errcode"
)

// relayListener hands the connections its listener accepts to the views
// attached to it one after another: while a clustered server waits in the
// coordinator election its standby API answers the port, then the real API
// takes over the same port, and no connection is dropped between them. A
// view's Close stops that view only; Close stops the listener.
type relayListener struct {
	root  net.Listener
	conns chan net.Conn
	done  chan struct{} // closed when root's Accept fails; err says why
	err   error
	stop  chan struct{}
	once  sync.Once
	exit  chan struct{} // closed when the accept loop has returned
}

func newRelayListener(root net.Listener) *relayListener {
	l := &relayListener{
		root: root, conns: make(chan net.Conn), done: make(chan struct{}),
		stop: make(chan struct{}), exit: make(chan struct{}),
	}
	go l.run()
	return l
}

func (l *relayListener) run() {
	defer close(l.exit)
	for {
		c, err := l.root.Accept()
		if err != nil {
			l.err = err
			close(l.done)
			return
		}
		select {
		case l.conns <- c:
		case <-l.stop:
			_ = c.Close()
			return
		}
	}
}

// Close closes the listener and waits for its accept loop to end.
func (l *relayListener) Close() error {
	l.once.Do(func() {
		close(l.stop)
		_ = l.root.Close()
	})
	<-l.exit
	return nil
}

// view returns a listener that takes the relay's connections until it is
// closed.
func (l *relayListener) view() net.Listener {
	return &relayView{l: l, closed: make(chan struct{})}
}

// relayView is one server's share of a relayListener.
type relayView struct {
	l      *relayListener
	once   sync.Once
	closed chan struct{}
}

// Accept returns the next connection, or net.ErrClosed once the view (or the
// relay) is closed.
func (v *relayView) Accept() (net.Conn, error) {
	select {
	case <-v.closed:
		return nil, net.ErrClosed
	default:
	}
	select {
	case c := <-v.l.conns:
		return c, nil
	case <-v.closed:
		return nil, net.ErrClosed
	case <-v.l.done:
		return nil, v.l.err
	case <-v.l.stop:
		return nil, net.ErrClosed
	}
}

// Close stops this view; the relay goes on accepting for the next one.
func (v *relayView) Close() error {
	v.once.Do(func() { close(v.closed) })
	return nil
}

// Addr is the relay's address.
func (v *relayView) Addr() net.Addr { return v.l.root.Addr() }

// standbyAPI is what the API port answers while this process waits in the
// coordinator election: every gRPC call fails at once with Unavailable (a
// Milvus SDK retries it or reports it; either way it does not wait for its
// deadline) and every REST request with HTTP 503 and Milvus's
// ServiceNotReady code. why says what the process waits for.
func standbyAPI(lis net.Listener, why func() string) *apiServer {
	g := grpc.NewServer(grpc.UnknownServiceHandler(func(any, grpc.ServerStream) error {
		return status.Error(codes.Unavailable, why())
	}))
	rest := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(map[string]any{"code": errcode.ServiceNotReady, "message": why()})
	})
	return newAPIServer(lis, g, rest)
}

// standbyReason words a standby's answer: which node it is and which one
// leads (by the election's record, read with a short timeout).
func (s *Server) standbyReason() string {
	n := s.cluster.Load()
	if n == nil {
		return "service not ready: starting"
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	msg := fmt.Sprintf("service not ready: node %d is a standby coordinator", n.member.Node().ID)
	if t, err := n.reg.Leader(ctx, ElectionCoordinator); err == nil {
		msg += fmt.Sprintf("; node %d at %s leads", t.Leader.ID, t.Leader.API)
	}
	return msg
}
