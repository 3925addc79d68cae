package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// moduleRoot finds the directory holding go.mod above the working directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, parent, dir, "go.mod not found above the test's directory")
		dir = parent
	}
}

// binary is the strata binary shared by the tests of one run; TestMain
// removes it.
var binary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// buildBinary builds cmd/strata once per test run (go build -o) and returns its path.
func buildBinary(t *testing.T) string {
	t.Helper()
	root := moduleRoot(t)
	binary.once.Do(func() {
		binary.dir, binary.err = os.MkdirTemp("", "strata-e2e-")
		if binary.err != nil {
			return
		}
		binary.path = filepath.Join(binary.dir, "strata")
		cmd := exec.Command("go", "build", "-o", binary.path, "./cmd/strata")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			binary.err = fmt.Errorf("go build: %w: %s", err, out)
		}
	})
	require.NoError(t, binary.err)
	return binary.path
}

// runTool runs the strata binary with args and returns its stdout, stderr
// and exit code.
func runTool(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return stdout.String(), stderr.String(), ee.ExitCode()
	}
	require.NoError(t, err)
	return stdout.String(), stderr.String(), 0
}

// removeBinary deletes the shared binary, if it was built.
func removeBinary() {
	if binary.dir != "" {
		_ = os.RemoveAll(binary.dir)
	}
}

// freePort returns a TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer func() { require.NoError(t, l.Close()) }()
	return l.Addr().(*net.TCPAddr).Port
}

// proc is a Strata server running as a child process.
type proc struct {
	cmd     *exec.Cmd
	addr    string
	metrics string
	stderr  *lockedBuffer
	done    chan struct{}
	err     error // Wait's result, set before done closes
}

// lockedBuffer collects a child's stderr.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startProc starts the binary over dataDir and waits until /healthz answers ok
// and no collection is loading (/healthz/detail): the collections loaded
// before a restart serve again, as most tests expect; startProcReady waits
// for /healthz alone. Extra arguments (such as --config FILE) follow the
// standard ones. Ports are picked free; a start that loses a port race is
// retried.
func startProc(t *testing.T, bin, dataDir string, extra ...string) *proc {
	t.Helper()
	p := startProcReady(t, bin, dataDir, extra...)
	require.True(t, p.waitLoads(60*time.Second), "collections still loading after 60 s; stderr:\n%s", p.stderr.String())
	return p
}

// waitLoads waits until /healthz/detail lists no collection loading.
func (p *proc) waitLoads(limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	client := &http.Client{Timeout: 2 * time.Second}
	for time.Now().Before(deadline) {
		var d struct {
			Loading []string `json:"loading"`
		}
		resp, err := client.Get("http://" + p.metrics + "/healthz/detail")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&d)
			_ = resp.Body.Close()
			if err == nil && resp.StatusCode == http.StatusOK && len(d.Loading) == 0 {
				return true
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// startProcReady is startProc without waiting for the loads: it returns as
// soon as /healthz answers ok.
func startProcReady(t *testing.T, bin, dataDir string, extra ...string) *proc {
	t.Helper()
	standaloneOnly(t, "runs the standalone binary as a process (kill -9, signals, its data dir)")
	var last string
	for attempt := 0; attempt < 3; attempt++ {
		p := &proc{stderr: &lockedBuffer{}, done: make(chan struct{})}
		p.addr = fmt.Sprintf("127.0.0.1:%d", freePort(t))
		p.metrics = fmt.Sprintf("127.0.0.1:%d", freePort(t))
		args := []string{"standalone", "--addr", p.addr, "--metrics-addr", p.metrics, "--data-dir", dataDir, "--log-level", "warn"}
		p.cmd = exec.Command(bin, append(args, extra...)...)
		p.cmd.Stdout = p.stderr
		p.cmd.Stderr = p.stderr
		require.NoError(t, p.cmd.Start())
		go func() { p.err = p.cmd.Wait(); close(p.done) }()
		t.Cleanup(func() { p.kill(t) })
		if p.waitHealthy(60 * time.Second) {
			return p
		}
		p.kill(t)
		last = p.stderr.String()
	}
	t.Fatalf("server did not become healthy; last stderr:\n%s", last)
	return nil
}

func (p *proc) waitHealthy(limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	client := &http.Client{Timeout: 2 * time.Second}
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return false
		default:
		}
		resp, err := client.Get("http://" + p.metrics + "/healthz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// kill sends SIGKILL (if still running) and waits for the process to end.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("process did not die after SIGKILL")
	}
}

// term sends SIGTERM and returns the exit code.
func (p *proc) term(t *testing.T) int {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("process did not stop after SIGTERM; stderr:\n%s", p.stderr.String())
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	require.NoError(t, p.err)
	return 0
}

// client connects the Milvus Go SDK to the process.
func (p *proc) client(t *testing.T) *milvusclient.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := milvusclient.New(ctx, &milvusclient.ClientConfig{Address: p.addr})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}
