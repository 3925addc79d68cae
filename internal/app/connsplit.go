package app

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// http2Preface is the client connection preface every HTTP/2 connection
// opens with (RFC 9113 §3.4).
const http2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// connSplitter splits the connections of one listener in two by their
// first bytes: a connection that opens with the HTTP/2 preface goes to
// h2, any other to h1. It reads only as many bytes as it takes to tell
// (an HTTP/1.x request differs from the preface within its first few
// bytes) and never writes; the bytes read are replayed to whoever accepts
// the connection. A connection that sends nothing telling within timeout
// is closed.
type connSplitter struct {
	root    net.Listener
	timeout time.Duration
	h2, h1  *connQueue
}

func newConnSplitter(root net.Listener, timeout time.Duration) *connSplitter {
	return &connSplitter{root: root, timeout: timeout, h2: newConnQueue(root.Addr()), h1: newConnQueue(root.Addr())}
}

// serve accepts until the root listener fails or is closed, then closes
// both queues with that error and returns it.
func (s *connSplitter) serve() error {
	var delay time.Duration
	for {
		c, err := s.root.Accept()
		if err != nil {
			if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
				// A transient accept failure (such as too many open
				// files): back off as net/http does.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			s.h2.close(err)
			s.h1.close(err)
			return err
		}
		delay = 0
		go s.route(c)
	}
}

// route sniffs c and queues it.
func (s *connSplitter) route(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(s.timeout))
	buf := make([]byte, len(http2Preface))
	n, h2, err := sniffPreface(c, buf)
	if err != nil {
		_ = c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	pc := &prefixConn{Conn: c, prefix: buf[:n]}
	if h2 {
		s.h2.push(pc)
	} else {
		s.h1.push(pc)
	}
}

// sniffPreface reads r into buf (len(http2Preface) bytes) until the bytes
// read differ from the preface or are the whole preface, and returns how
// many it read and whether they are the preface. An error is returned only
// while the bytes read so far still match.
func sniffPreface(r io.Reader, buf []byte) (int, bool, error) {
	n := 0
	for n < len(http2Preface) {
		m, err := r.Read(buf[n:])
		if m > 0 && !bytes.Equal(buf[n:n+m], []byte(http2Preface[n:n+m])) {
			return n + m, false, nil
		}
		n += m
		if err != nil {
			return n, false, err
		}
	}
	return n, true, nil
}

// prefixConn is a connection whose first bytes were already read: Read
// returns them before reading on.
type prefixConn struct {
	net.Conn
	prefix []byte
}

// Read implements net.Conn.
func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// CloseWrite half-closes a TCP connection, as net/http does before it
// closes a connection it answered with an error.
func (c *prefixConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// connQueue is a net.Listener fed by a connSplitter.
type connQueue struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	err   error // why done was closed; set before
}

func newConnQueue(addr net.Addr) *connQueue {
	return &connQueue{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

// push hands c to Accept, or closes it when the queue is closed.
func (q *connQueue) push(c net.Conn) {
	select {
	case q.conns <- c:
	case <-q.done:
		_ = c.Close()
	}
}

func (q *connQueue) close(err error) {
	q.once.Do(func() {
		q.err = err
		close(q.done)
	})
}

// Accept implements net.Listener.
func (q *connQueue) Accept() (net.Conn, error) {
	select {
	case c := <-q.conns:
		return c, nil
	case <-q.done:
		return nil, q.err
	}
}

// Close implements net.Listener: it stops handing out connections; the
// root listener stays open.
func (q *connQueue) Close() error {
	q.close(net.ErrClosed)
	return nil
}

// Addr implements net.Listener.
func (q *connQueue) Addr() net.Addr { return q.addr }
