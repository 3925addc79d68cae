package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-db/strata/internal/app"
	"github.com/strata-db/strata/internal/enginelaunch"
	"github.com/strata-db/strata/internal/enginetest"
)

// targetEnv selects what startServer starts: "standalone" (or unset) an
// in-process standalone server per test, "cluster" an in-process cluster
// per test on engines shared by the whole run (README "Tests and benchmarks"):
//
//	STRATA_E2E_TARGET=cluster go test ./e2e/ -count=1 -timeout 60m
const targetEnv = "STRATA_E2E_TARGET"

// The cluster startServer starts in cluster mode: a coordinator (which
// serves the Milvus API) and these nodes, each an app.Server of its role
// in the test process.
const (
	clusterDataNodes  = 1
	clusterQueryNodes = 2
)

// target is where startServer puts a test's server: nil a standalone, else
// a cluster on these engines. TestMain sets it for the run under
// STRATA_E2E_TARGET=cluster; TestSuiteOnCluster sets it for its subtests
// (the e2e tests run one at a time: none is parallel).
var target *clusterEngines

// clusterEngines are the engines the clusters of one run share: etcd
// in-process, Kafka and the S3 server as child processes. Each data
// directory gets a namespace of its own (etcd roots, a bucket, a Kafka
// topic prefix), so tests do not see each other, and a server started
// again on the same directory finds its data again.
type clusterEngines struct {
	etcd  *enginetest.EtcdServer
	kafka *enginelaunch.Process
	s3    *enginelaunch.Process
	adm   *kadm.Client
	kcl   *kgo.Client

	mu    sync.Mutex
	names map[string]string // data dir -> namespace
	gone  map[string]bool   // namespaces whose test ended
}

// newClusterEngines wraps the engines for startServer.
func newClusterEngines(etcd *enginetest.EtcdServer, kafka, s3 *enginelaunch.Process) (*clusterEngines, error) {
	kcl, err := kgo.NewClient(kgo.SeedBrokers(kafka.Addr))
	if err != nil {
		return nil, fmt.Errorf("e2e: kafka admin client: %w", err)
	}
	return &clusterEngines{
		etcd: etcd, kafka: kafka, s3: s3, adm: kadm.NewClient(kcl), kcl: kcl,
		names: map[string]string{}, gone: map[string]bool{},
	}, nil
}

// launchClusterEngines starts the engines of a cluster-mode run under a
// temporary directory; stop stops them and removes it.
func launchClusterEngines() (e *clusterEngines, stop func(), err error) {
	dir, err := os.MkdirTemp("", "strata-e2e-engines-")
	if err != nil {
		return nil, nil, err
	}
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
		_ = os.RemoveAll(dir)
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	etcd, err := enginetest.LaunchEtcd(filepath.Join(dir, "etcd"))
	if err != nil {
		return nil, nil, err
	}
	stops = append(stops, etcd.Stop)
	kafka, err := enginelaunch.Kafka(filepath.Join(dir, "kafka"), "")
	if err != nil {
		return nil, nil, err
	}
	stops = append(stops, kafka.Stop)
	s3, err := enginelaunch.S3(filepath.Join(dir, "s3"), "")
	if err != nil {
		return nil, nil, err
	}
	stops = append(stops, s3.Stop)
	if e, err = newClusterEngines(etcd, kafka, s3); err != nil {
		return nil, nil, err
	}
	stops = append(stops, e.close)
	return e, stop, nil
}

// setTarget reads STRATA_E2E_TARGET for TestMain and, for a cluster run,
// starts the engines; stop stops them.
func setTarget() (stop func(), err error) {
	switch v := os.Getenv(targetEnv); v {
	case "", "standalone":
		return func() {}, nil
	case "cluster":
		e, stop, err := launchClusterEngines()
		if err != nil {
			return nil, fmt.Errorf("e2e: %s=cluster needs the engines (.ci/engines.sh): %w", targetEnv, err)
		}
		target = e
		return func() { target = nil; stop() }, nil
	default:
		return nil, fmt.Errorf("e2e: %s=%q: want standalone or cluster", targetEnv, v)
	}
}

// close releases the admin client.
func (e *clusterEngines) close() { e.kcl.Close() }

// namespace returns dir's namespace, made on its first use; its Kafka
// topics are deleted when the test that made it ends (the engines hold
// hundreds of tests' data otherwise).
func (e *clusterEngines) namespace(t testing.TB, dir string) string {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if name, ok := e.names[dir]; ok {
		require.False(t, e.gone[name], "cluster mode: data dir %s is used again after the test that first used it ended", dir)
		return name
	}
	name := fmt.Sprintf("e2e%d", len(e.names)+1)
	e.names[dir] = name
	t.Cleanup(func() {
		e.mu.Lock()
		e.gone[name] = true
		e.mu.Unlock()
		if err := e.dropTopics(name + "-"); err != nil {
			t.Logf("cluster mode: deleting namespace %s's topics: %v", name, err)
		}
	})
	return name
}

// dropTopics deletes the Kafka topics whose names start with prefix.
func (e *clusterEngines) dropTopics(prefix string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	topics, err := e.adm.ListTopics(ctx)
	if err != nil {
		return err
	}
	var names []string
	for _, name := range topics.Names() {
		if strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	resp, err := e.adm.DeleteTopics(ctx, names...)
	if err != nil {
		return err
	}
	return resp.Error()
}

// config puts cfg's engines on the namespace's part of the engines.
func (e *clusterEngines) config(t testing.TB, cfg *app.Config, name string) {
	t.Helper()
	doc, err := json.Marshal(enginelaunch.Config(e.etcd.URL, e.kafka.Addr, e.s3.Addr, name, nil))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(doc, cfg))
}

// standaloneOnly skips the test in cluster mode: it checks something only
// a standalone server has (why says what).
func standaloneOnly(t testing.TB, why string) {
	t.Helper()
	if target != nil {
		t.Skip("standalone only: " + why)
	}
}

// part is one app.Server of a server: a standalone, or a cluster's
// coordinator or node.
type part struct {
	role   string
	srv    *app.Server
	cancel context.CancelFunc
	done   chan error
}

// runPart runs srv until its cancel.
func runPart(role string, srv *app.Server) *part {
	ctx, cancel := context.WithCancel(context.Background())
	p := &part{role: role, srv: srv, cancel: cancel, done: make(chan error, 1)}
	go func() { p.done <- srv.Run(ctx) }()
	return p
}

// startCluster starts cfg (the test's configuration, tweaks applied) as a
// cluster on namespace ns (cfg.DataDir's): the coordinator over the data
// dir, each node over a directory of its own in it. The server's API is the
// coordinator's (tests reach it through server.addr only, so a proxy's
// address can take its place once proxies are a role of their own).
func startCluster(t testing.TB, cfg app.Config, ns string, logger *slog.Logger) *server {
	t.Helper()
	dir := cfg.DataDir
	s := &server{t: t, dir: dir, namespace: ns}
	t.Cleanup(s.stop)
	listen := func(role string, i int) *app.Server {
		c := cfg
		c.Role = role
		if c.InternalAddr == "" {
			c.InternalAddr = "127.0.0.1:0"
		}
		if role != app.RoleCoordinator {
			c.DataDir = s.nodeDir(role, i)
			c.MetricsAddr, c.InternalAddr = "", "127.0.0.1:0"
		}
		srv, err := app.Listen(c, logger.With("role", role, "node", i))
		require.NoError(t, err)
		return srv
	}
	coord := listen(app.RoleCoordinator, 0)
	s.addr, s.metrics, s.internal = coord.Addr(), coord.MetricsAddr(), coord.InternalAddr()
	s.parts = append(s.parts, runPart(app.RoleCoordinator, coord))
	for i := range clusterDataNodes {
		s.parts = append(s.parts, runPart(app.RoleDataNode, listen(app.RoleDataNode, i+1)))
	}
	for i := range clusterQueryNodes {
		s.parts = append(s.parts, runPart(app.RoleQueryNode, listen(app.RoleQueryNode, i+1)))
	}
	// The nodes register their sessions once the coordinator leads; the
	// collections loaded before a restart then load again on them.
	deadline := time.After(60 * time.Second)
	for _, p := range s.parts[1:] {
		for !p.srv.Ready() {
			select {
			case err := <-p.done:
				p.done <- err // for stop
				require.NoError(t, err, "%s stopped during the start", p.role)
				t.Fatalf("%s stopped during the start", p.role)
			case <-deadline:
				t.Fatalf("%s not ready 60 s after the start", p.role)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	s.waitReloaded(coord, s.parts[0])
	return s
}

// waitReloaded waits until srv serves (Ready: its API and metrics port
// are up, /healthz answers ok) and its collections loaded before a
// restart load again, or until its Run fails. Reloaded alone may close
// first when there is nothing to reload.
func (s *server) waitReloaded(srv *app.Server, p *part) {
	s.t.Helper()
	timeout := time.After(60 * time.Second)
	select {
	case <-srv.Reloaded():
	case err := <-p.done:
		p.done <- err // for stop
		return
	case <-timeout:
		s.t.Fatal("collections still loading 60 s after the start")
	}
	for !srv.Ready() {
		select {
		case err := <-p.done:
			p.done <- err
			return
		case <-timeout:
			s.t.Fatal("not ready 60 s after the start")
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// storeArgs are the arguments that tell a strata tool (backup) where the
// server's object store is: its data dir, or a cluster's configuration file.
func (s *server) storeArgs(t *testing.T) []string {
	t.Helper()
	if s.namespace == "" {
		return []string{"--data-dir", s.dir}
	}
	e := target
	p := filepath.Join(t.TempDir(), "strata.json")
	require.NoError(t, enginelaunch.WriteConfig(p, enginelaunch.Config(e.etcd.URL, e.kafka.Addr, e.s3.Addr, s.namespace, nil)))
	return []string{"--config", p}
}

// storageDir is the directory holding the server's objects at their keys'
// paths: a standalone's {data-dir}/storage, or a cluster's bucket in the S3
// gateway's posix backend (enginelaunch.Process.Dir).
func (s *server) storageDir(t testing.TB) string {
	t.Helper()
	if s.namespace == "" {
		return filepath.Join(s.dir, "storage")
	}
	var cfg app.Config
	target.config(t, &cfg, s.namespace)
	return filepath.Join(target.s3.Dir(), "data", cfg.Engines.Objects.S3.Bucket)
}

// mmapDirs are the query nodes' mmap cache directories: a standalone's
// {data-dir}/cache/mmap, or each of a cluster's query nodes'.
func (s *server) mmapDirs() []string {
	if s.namespace == "" {
		return []string{filepath.Join(s.dir, "cache", "mmap")}
	}
	var out []string
	for i := range clusterQueryNodes {
		out = append(out, filepath.Join(s.nodeDir(app.RoleQueryNode, i+1), "cache", "mmap"))
	}
	return out
}

// nodeDir is the data dir of a cluster's i-th node of role: beside the
// test's data dir, not in it (a node keeps only caches there; the test's
// directory stands for what a standalone keeps, which in cluster mode is
// all on the engines), and under the same test's temporary directory.
func (s *server) nodeDir(role string, i int) string {
	return filepath.Join(s.dir+".nodes", fmt.Sprintf("%s-%d", role, i))
}

// testLogger is the servers' logger: discarded, written to logs (when not
// nil) at level, or to stderr with STRATA_TEST_LOG set.
func testLogger(logs io.Writer, level slog.Leveler) *slog.Logger {
	logger := slog.New(slog.DiscardHandler)
	if os.Getenv("STRATA_TEST_LOG") != "" {
		logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if logs != nil {
		logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: level}))
	}
	return logger
}

// stopParts stops every part at once and waits for each; a part that
// fails to stop in time or returns an error fails the test.
func stopParts(t testing.TB, parts []*part) {
	t.Helper()
	for _, p := range parts {
		p.cancel()
	}
	var errs []error
	timeout := time.After(20 * time.Second)
	for _, p := range parts {
		select {
		case err := <-p.done:
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", p.role, err))
			}
		case <-timeout:
			t.Fatalf("%s did not stop", p.role)
		}
	}
	require.NoError(t, errors.Join(errs...))
}
