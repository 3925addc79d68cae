package app

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func TestSniffPreface(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		h2   bool
		fail bool
	}{
		{in: http2Preface + "more", n: len(http2Preface), h2: true},
		{in: "POST /v2/vectordb/collections/list HTTP/1.1\r\n", n: 2},
		{in: "GET / HTTP/1.0\r\n\r\n", n: 1},
		{in: "PRI * HTTP/1.1\r\n", n: 12},
		{in: "PRI * HT", n: 8, fail: true}, // ends while still matching
	} {
		buf := make([]byte, len(http2Preface))
		n, h2, err := sniffPreface(iotest.OneByteReader(strings.NewReader(tc.in)), buf)
		require.Equal(t, tc.fail, err != nil, "%q: %v", tc.in, err)
		require.Equal(t, tc.n, n, "%q", tc.in)
		require.Equal(t, tc.h2, h2, "%q", tc.in)
		require.Equal(t, tc.in[:n], string(buf[:n]))
	}
}

// TestAPIServerOnePort serves gRPC and REST on one listener and reaches
// both, including an HTTP/1.0 request shorter than the HTTP/2 preface.
func TestAPIServerOnePort(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	g := grpc.NewServer()
	healthpb.RegisterHealthServer(g, health.NewServer())
	rest := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "rest "+r.Proto) })
	a := newAPIServer(lis, g, rest)
	served := make(chan error, 1)
	go func() { served <- a.serve() }()
	addr := lis.Addr().String()

	resp, err := http.Get("http://" + addr + "/x")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, "rest HTTP/1.1", string(body))

	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	_, err = io.WriteString(c, "GET / HTTP/1.0\r\n\r\n")
	require.NoError(t, err)
	r10, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	body, _ = io.ReadAll(r10.Body)
	_ = c.Close()
	require.Equal(t, "rest HTTP/1.0", string(body))

	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer func() { _ = cc.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hr, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	require.Equal(t, healthpb.HealthCheckResponse_SERVING, hr.GetStatus())

	a.shutdown(time.Second)
	select {
	case err := <-served:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not return after shutdown")
	}
}

// TestConnSplitterDropsSilent closes a connection that sends nothing
// within the timeout, and hands out no connection for it.
func TestConnSplitterDropsSilent(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := newConnSplitter(lis, 100*time.Millisecond)
	served := make(chan error, 1)
	go func() { served <- s.serve() }()
	c, err := net.Dial("tcp", lis.Addr().String())
	require.NoError(t, err)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = c.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF)
	_ = c.Close()
	_ = lis.Close()
	require.Error(t, <-served)
	_, err = s.h1.Accept()
	require.ErrorIs(t, err, net.ErrClosed)
	_, err = s.h2.Accept()
	require.ErrorIs(t, err, net.ErrClosed)
}
