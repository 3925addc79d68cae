// Package enginelaunch starts the real cluster engines as child processes
// on loopback: an Apache Kafka 4 broker in KRaft mode (Maven Central's
// jars on the local JDK), Versity S3 Gateway and etcd, as .ci/engines.sh
// installs them, and Strata's own processes on them (StartStrata, Config).
// Tests use it through internal/enginetest (RealKafka, RealS3);
// tools/cluster runs a development cluster with it, tools/clusterbench a
// benchmark. Each engine Process can be killed (SIGKILL) and started again
// on the same data and port.
package enginelaunch

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
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
	"time"
)

// ErrNotInstalled is wrapped by a launcher whose engine is not installed
// (run .ci/engines.sh).
var ErrNotInstalled = errors.New("enginelaunch: not installed")

// Dir is where .ci/engines.sh installs the engines: $STRATA_ENGINES, else
// ~/.cache/strata-engines.
func Dir() string {
	if d := os.Getenv("STRATA_ENGINES"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ".cache/strata-engines"
	}
	return filepath.Join(home, ".cache", "strata-engines")
}

// Credentials of the S3 gateway's only identity.
const (
	S3AccessKey = "strata"
	S3SecretKey = "strata-secret"
)

// Process is a real engine running as a child process.
type Process struct {
	// Addr is the host:port (etcd: the client URL) clients connect to.
	Addr string
	// Name names the engine ("kafka", "versitygw", "etcd").
	Name string
	dir  string
	argv []string
	env  []string
	// ready reports whether the process answers; started is the number of
	// earlier starts that became ready.
	ready func(started int) bool

	mu      sync.Mutex
	cmd     *exec.Cmd
	log     *os.File
	exited  chan struct{}
	started int
}

// Start starts the process and waits up to a minute until it is ready;
// on failure the error carries the end of the engine's log.
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return nil
	}
	log, err := os.OpenFile(filepath.Join(p.dir, "log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	cmd.Env, cmd.Stdout, cmd.Stderr, cmd.Dir = append(os.Environ(), p.env...), log, log, p.dir
	// Its own process group: a kill reaches the JVM's children too, and a
	// Ctrl-C meant for the parent does not.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return fmt.Errorf("enginelaunch: start %s: %w", p.Name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	p.cmd, p.log, p.exited = cmd, log, exited
	deadline := time.Now().Add(time.Minute)
	for !p.ready(p.started) {
		select {
		case <-exited:
			p.cmd = nil
			_ = log.Close()
			return fmt.Errorf("enginelaunch: %s exited during start; its log ends:\n%s", p.Name, p.tail())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stopLocked(syscall.SIGKILL)
			return fmt.Errorf("enginelaunch: %s not ready after a minute; its log ends:\n%s", p.Name, p.tail())
		}
	}
	p.started++
	return nil
}

// Kill stops the process with SIGKILL (a crash) and waits until it is gone.
func (p *Process) Kill() { p.stop(syscall.SIGKILL) }

// Stop stops the process with SIGTERM, SIGKILL after 10 s.
func (p *Process) Stop() { p.stop(syscall.SIGTERM) }

func (p *Process) stop(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopLocked(sig)
}

func (p *Process) stopLocked(sig syscall.Signal) {
	if p.cmd == nil {
		return
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, sig)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.exited
	}
	_ = p.log.Close()
	p.cmd, p.log = nil, nil
}

// tail is the end of the engine's log.
func (p *Process) tail() string {
	b, _ := os.ReadFile(filepath.Join(p.dir, "log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// Dir is the directory the engine's data and log are under (the S3
// gateway's posix backend is Dir/data, a directory per bucket holding each
// object at its key's path).
func (p *Process) Dir() string { return p.dir }

// String names the engine and its address.
func (p *Process) String() string { return p.Name + " " + p.Addr }

// FreeAddr returns a loopback host:port that was free a moment ago.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// dials reports whether a TCP connection to addr succeeds.
func dials(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// Kafka prepares and starts an Apache Kafka 4 broker (KRaft: broker and
// controller in one process, replication factor 1) with its data under
// dir, listening on addr ("" = a free port). It fails with ErrNotInstalled
// when java or the broker's jars ({Dir}/kafka/libs) are missing.
func Kafka(dir, addr string) (*Process, error) {
	libs := filepath.Join(Dir(), "kafka", "libs")
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("%w: java (a JDK 17+) for Kafka", ErrNotInstalled)
	}
	if m, _ := filepath.Glob(filepath.Join(libs, "kafka_2.13-*.jar")); len(m) == 0 {
		return nil, fmt.Errorf("%w: Kafka's jars in %s (run .ci/engines.sh)", ErrNotInstalled, libs)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if addr == "" {
		if addr, err = FreeAddr(); err != nil {
			return nil, err
		}
	}
	ctrl, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	props := strings.Join([]string{
		"process.roles=broker,controller",
		"node.id=1",
		"controller.quorum.voters=1@" + ctrl,
		"listeners=PLAINTEXT://" + addr + ",CONTROLLER://" + ctrl,
		"advertised.listeners=PLAINTEXT://" + addr,
		"controller.listener.names=CONTROLLER",
		"inter.broker.listener.name=PLAINTEXT",
		"listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
		"log.dirs=" + filepath.Join(dir, "data"),
		"num.partitions=1",
		"offsets.topic.replication.factor=1",
		"transaction.state.log.replication.factor=1",
		"transaction.state.log.min.isr=1",
		"share.coordinator.state.topic.replication.factor=1",
		"share.coordinator.state.topic.min.isr=1",
		"group.initial.rebalance.delay.ms=0",
		"num.network.threads=2",
		"num.io.threads=2",
		"num.recovery.threads.per.data.dir=1",
		// The cleaner (compacted topics only; Strata has none) reserves 128 MiB by default.
		"log.cleaner.dedupe.buffer.size=8388608",
		"log.cleaner.threads=1",
		// A broker restarted after kill -9 registers only once its old session
		// expired; the 9 s default made every crash-restart take ~12 s.
		"broker.heartbeat.interval.ms=500",
		"broker.session.timeout.ms=2000",
	}, "\n") + "\n"
	write := func(name, text string) (string, error) {
		p := filepath.Join(dir, name)
		return p, os.WriteFile(p, []byte(text), 0o644)
	}
	conf, err := write("server.properties", props)
	if err != nil {
		return nil, err
	}
	log4j, err := write("log4j.properties", "log4j.rootLogger=WARN, stdout\n"+
		"log4j.appender.stdout=org.apache.log4j.ConsoleAppender\n"+
		"log4j.appender.stdout.layout=org.apache.log4j.PatternLayout\n"+
		"log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n\n"+
		"log4j.logger.kafka.server.KafkaRaftServer=INFO\n")
	if err != nil {
		return nil, err
	}
	log4j2, err := write("log4j2.properties", "status=error\nrootLogger.level=warn\n")
	if err != nil {
		return nil, err
	}
	// Serial GC, C1 only and a small heap: ~170 MB RSS, ready in ~3 s.
	jvm := []string{
		java, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k", "-Djava.awt.headless=true",
		"-Dlog4j.configuration=file:" + log4j, "-Dlog4j2.configurationFile=" + log4j2, "-cp", filepath.Join(libs, "*"),
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "meta.properties")); err != nil {
		id := make([]byte, 16)
		_, _ = rand.Read(id)
		args := append(append([]string{}, jvm[1:]...), "-Xmx128m", "kafka.tools.StorageTool", "format",
			"-t", base64.RawURLEncoding.EncodeToString(id), "-c", conf)
		if out, err := exec.Command(jvm[0], args...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("enginelaunch: format Kafka's storage: %w\n%s", err, out)
		}
	}
	p := &Process{Addr: addr, Name: "kafka", dir: dir, argv: append(append([]string{}, jvm...), "-Xmx128m", "kafka.Kafka", conf)}
	p.ready = func(started int) bool {
		b, _ := os.ReadFile(filepath.Join(dir, "log"))
		// Kafka logs "Kafka Server started" once per start.
		return bytes.Count(b, []byte("Kafka Server started")) > started && dials(addr)
	}
	return p, p.Start()
}

// S3 prepares and starts Versity S3 Gateway (posix backend under dir, one
// account: S3AccessKey / S3SecretKey) on addr ("" = a free port). It fails
// with ErrNotInstalled when the gateway ({Dir}/bin/versitygw) is missing.
func S3(dir, addr string) (*Process, error) {
	bin := filepath.Join(Dir(), "bin", "versitygw")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%w: %s (run .ci/engines.sh)", ErrNotInstalled, bin)
	}
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	var err error
	if addr == "" {
		if addr, err = FreeAddr(); err != nil {
			return nil, err
		}
	}
	p := &Process{
		Addr: addr, Name: "versitygw", dir: dir,
		argv: []string{bin, "--port", addr, "posix", data},
		env:  []string{"ROOT_ACCESS_KEY=" + S3AccessKey, "ROOT_SECRET_KEY=" + S3SecretKey},
	}
	p.ready = func(int) bool {
		resp, err := http.Get("http://" + addr + "/")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return true // any answer (403 to an anonymous request)
	}
	return p, p.Start()
}

// Etcd prepares and starts a single-member etcd server with its data under
// dir, clients on addr ("" = a free port); Addr is its client URL. It
// fails with ErrNotInstalled when neither {Dir}/bin/etcd (.ci/engines.sh
// etcd) nor etcd on PATH exists.
func Etcd(dir, addr string) (*Process, error) {
	bin := filepath.Join(Dir(), "bin", "etcd")
	if _, err := os.Stat(bin); err != nil {
		if bin, err = exec.LookPath("etcd"); err != nil {
			return nil, fmt.Errorf("%w: etcd (run .ci/engines.sh etcd, or apt-get install etcd-server)", ErrNotInstalled)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var err error
	if addr == "" {
		if addr, err = FreeAddr(); err != nil {
			return nil, err
		}
	}
	peer, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	url := "http://" + addr
	p := &Process{
		Addr: url, Name: "etcd", dir: dir,
		argv: []string{
			bin, "--name", "strata-etcd", "--data-dir", filepath.Join(dir, "data"),
			"--listen-client-urls", url, "--advertise-client-urls", url,
			"--listen-peer-urls", "http://" + peer, "--initial-advertise-peer-urls", "http://" + peer,
			"--initial-cluster", "strata-etcd=http://" + peer, "--log-level", "warn",
		},
	}
	p.ready = func(int) bool {
		resp, err := http.Get(url + "/health")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	return p, p.Start()
}
