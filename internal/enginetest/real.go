package enginetest

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
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
)

// The real engines (.ci/engines.sh installs them; README "Tests"): Apache
// Kafka 4 in KRaft mode from Maven Central's jars on the local JDK, and
// Versity S3 Gateway. RealKafka and RealS3 run each as a child process on
// loopback until the test ends, and skip the test, naming what is missing,
// when it is not installed.

// EnginesDir is where .ci/engines.sh installs the real engines:
// $STRATA_ENGINES, else ~/.cache/strata-engines.
func EnginesDir() string {
	if d := os.Getenv("STRATA_ENGINES"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ".cache/strata-engines"
	}
	return filepath.Join(home, ".cache", "strata-engines")
}

// S3 credentials of RealS3's only identity.
const (
	RealS3AccessKey = "strata"
	RealS3SecretKey = "strata-secret"
)

// Engine is a real engine running as a child process: Kill crashes it
// (SIGKILL), Start brings it back on the same data and port.
type Engine struct {
	// Addr is the host:port clients connect to.
	Addr string
	name string
	t    testing.TB
	dir  string
	argv []string
	env  []string
	// ready reports whether the process answers.
	ready func() bool

	mu  sync.Mutex
	cmd *exec.Cmd
	log *os.File
	// started counts the starts that became ready (guarded by mu).
	started int
}

// Start starts the process and waits up to a minute until it is ready;
// it fails the test otherwise, with the end of the engine's log.
func (e *Engine) Start() {
	e.t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cmd != nil {
		return
	}
	log, err := os.OpenFile(filepath.Join(e.dir, "log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command(e.argv[0], e.argv[1:]...)
	cmd.Env, cmd.Stdout, cmd.Stderr, cmd.Dir = append(os.Environ(), e.env...), log, log, e.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		e.t.Fatalf("enginetest: start %s: %v", e.name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	e.cmd, e.log = cmd, log
	deadline := time.Now().Add(time.Minute)
	for !e.ready() {
		select {
		case <-exited:
			e.cmd = nil
			e.t.Fatalf("enginetest: %s exited during start; its log ends:\n%s", e.name, e.tail())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("enginetest: %s not ready after a minute; its log ends:\n%s", e.name, e.tail())
		}
	}
	e.started++
}

// Kill stops the process with SIGKILL (a crash) and waits until it is gone.
func (e *Engine) Kill() { e.stop(syscall.SIGKILL) }

// Stop stops the process with SIGTERM, SIGKILL after 10 s.
func (e *Engine) Stop() { e.stop(syscall.SIGTERM) }

func (e *Engine) stop(sig syscall.Signal) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cmd == nil {
		return
	}
	pid := e.cmd.Process.Pid
	_ = syscall.Kill(-pid, sig)
	done := make(chan struct{})
	go func() {
		for syscall.Kill(pid, 0) == nil {
			var ws syscall.WaitStatus
			if p, _ := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); p == pid {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-done
	}
	_ = e.log.Close()
	e.cmd, e.log = nil, nil
}

// tail is the end of the engine's log.
func (e *Engine) tail() string {
	b, _ := os.ReadFile(filepath.Join(e.dir, "log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// freeAddr returns a loopback host:port that was free a moment ago.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
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

// RealKafka starts an Apache Kafka 4 broker (KRaft: broker and controller
// in one process, replication factor 1) on loopback until the test ends.
// It skips the test when java or the broker's jars
// ({EnginesDir}/kafka/libs, from .ci/engines.sh) are missing.
func RealKafka(t testing.TB) *Engine {
	t.Helper()
	libs := filepath.Join(EnginesDir(), "kafka", "libs")
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("enginetest: java is not installed: no real Kafka (install a JDK 17+ and run .ci/engines.sh)")
	}
	if m, _ := filepath.Glob(filepath.Join(libs, "kafka_2.13-*.jar")); len(m) == 0 {
		t.Skipf("enginetest: Kafka's jars are not in %s: run .ci/engines.sh", libs)
	}
	dir := t.TempDir()
	addr, ctrl := freeAddr(t), freeAddr(t)
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
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	conf := write("server.properties", props)
	log4j := write("log4j.properties", "log4j.rootLogger=WARN, stdout\n"+
		"log4j.appender.stdout=org.apache.log4j.ConsoleAppender\n"+
		"log4j.appender.stdout.layout=org.apache.log4j.PatternLayout\n"+
		"log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n\n"+
		"log4j.logger.kafka.server.KafkaRaftServer=INFO\n")
	log4j2 := write("log4j2.properties", "status=error\nrootLogger.level=warn\n")
	// Serial GC, C1 only and a small heap: ~170 MB RSS, ready in ~3 s.
	jvm := []string{java, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k", "-Djava.awt.headless=true",
		"-Dlog4j.configuration=file:" + log4j, "-Dlog4j2.configurationFile=" + log4j2, "-cp", filepath.Join(libs, "*")}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	clusterID := base64.RawURLEncoding.EncodeToString(id)
	fargs := append(append([]string{}, jvm[1:]...), "-Xmx128m", "kafka.tools.StorageTool", "format", "-t", clusterID, "-c", conf)
	format := exec.Command(jvm[0], fargs...)
	if out, err := format.CombinedOutput(); err != nil {
		t.Fatalf("enginetest: format Kafka's storage: %v\n%s", err, out)
	}
	e := &Engine{
		Addr: addr, name: "kafka", t: t, dir: dir,
		argv: append(append([]string{}, jvm...), "-Xmx128m", "kafka.Kafka", conf),
	}
	e.ready = func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "log"))
		// "started" is logged once per start: count starts against kills.
		return bytes.Count(b, []byte("Kafka Server started")) > e.started && dials(addr)
	}
	e.Start()
	t.Cleanup(e.Stop)
	return e
}

// RealS3 starts Versity S3 Gateway (posix backend, one account with
// RealS3AccessKey / RealS3SecretKey) on loopback until the test ends. It
// skips the test when the gateway ({EnginesDir}/bin/versitygw, from
// .ci/engines.sh) is missing.
func RealS3(t testing.TB) *Engine {
	t.Helper()
	bin := filepath.Join(EnginesDir(), "bin", "versitygw")
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("enginetest: %s is not installed: run .ci/engines.sh", bin)
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	e := &Engine{
		Addr: addr, name: "versitygw", t: t, dir: dir,
		argv: []string{bin, "--port", addr, "posix", data},
		env:  []string{"ROOT_ACCESS_KEY=" + RealS3AccessKey, "ROOT_SECRET_KEY=" + RealS3SecretKey},
	}
	e.ready = func() bool {
		resp, err := http.Get("http://" + addr + "/")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return true // any answer (403 to an anonymous request)
	}
	e.Start()
	t.Cleanup(e.Stop)
	return e
}

// String names the engine and its address.
func (e *Engine) String() string { return fmt.Sprintf("%s %s", e.name, e.Addr) }
