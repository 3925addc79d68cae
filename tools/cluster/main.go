// Command cluster runs a development Strata cluster on loopback, every part
// a process of its own: etcd, an Apache Kafka 4 broker and Versity S3
// Gateway (internal/enginelaunch; install them with `.ci/engines.sh` and
// `.ci/engines.sh etcd`), then the coordinators, query nodes and data nodes
// (`strata run ROLE`). It prints the Milvus API address and runs until
// Ctrl-C or SIGTERM, then stops everything (the data stays under --dir).
//
//	go run ./tools/cluster --dir /tmp/strata-cluster [--coordinators 2] [--querynodes 2] [--datanodes 2]
//	                       [--addr HOST:PORT] [--metrics-addr HOST:PORT] [--strata BINARY]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/strata-db/strata/internal/enginelaunch"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

// role is a strata process of the cluster.
type role struct {
	name     string // coordinator, querynode, datanode
	index    int
	api      string // coordinator only
	internal string
	metrics  string
	cmd      *exec.Cmd
}

func run() error {
	dir := flag.String("dir", "strata-cluster", "directory of every process's data and log")
	bin := flag.String("strata", "", "strata binary (default: go build ./cmd/strata into --dir)")
	coords := flag.Int("coordinators", 1, "coordinator processes (the first leads, the others stand by)")
	qns := flag.Int("querynodes", 2, "query node processes")
	dns := flag.Int("datanodes", 2, "data node processes")
	apiAddr := flag.String("addr", "", "the first coordinator's Milvus API address (default: a free loopback port)")
	metricsAddr := flag.String("metrics-addr", "", "the first coordinator's metrics address (default: a free loopback port)")
	flag.Parse()
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	*dir = abs
	if *bin == "" {
		*bin = filepath.Join(*dir, "strata")
		build := exec.Command("go", "build", "-o", *bin, "./cmd/strata")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build ./cmd/strata (run from the repository root): %w", err)
		}
	}

	etcd, err := enginelaunch.Etcd(filepath.Join(*dir, "etcd"), "")
	if err != nil {
		return err
	}
	defer etcd.Stop()
	kafka, err := enginelaunch.Kafka(filepath.Join(*dir, "kafka"), "")
	if err != nil {
		return err
	}
	defer kafka.Stop()
	s3, err := enginelaunch.S3(filepath.Join(*dir, "s3"), "")
	if err != nil {
		return err
	}
	defer s3.Stop()
	fmt.Printf("engines: %s, %s, %s\n", etcd, kafka, s3)

	cfg := map[string]any{"engines": map[string]any{
		"meta": map[string]any{"type": "etcd", "etcd": map[string]any{"endpoints": []string{etcd.Addr}, "root": "strata/"}},
		"objects": map[string]any{"type": "s3", "s3": map[string]any{
			"endpoint": s3.Addr, "bucket": "strata", "createBucket": true,
			"accessKey": enginelaunch.S3AccessKey, "secretKey": enginelaunch.S3SecretKey,
		}},
		"wal": map[string]any{"type": "kafka", "kafka": map[string]any{"brokers": []string{kafka.Addr}}},
	}}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	cfgPath := filepath.Join(*dir, "strata.json")
	if err := os.WriteFile(cfgPath, b, 0o644); err != nil {
		return err
	}

	var roles []*role
	add := func(name string, n int) error {
		for i := 1; i <= n; i++ {
			r := &role{name: name, index: i}
			var err error
			if name == "coordinator" {
				if r.api, err = enginelaunch.FreeAddr(); err != nil {
					return err
				}
			}
			if r.internal, err = enginelaunch.FreeAddr(); err != nil {
				return err
			}
			if r.metrics, err = enginelaunch.FreeAddr(); err != nil {
				return err
			}
			roles = append(roles, r)
		}
		return nil
	}
	if err := errors.Join(add("coordinator", *coords), add("datanode", *dns), add("querynode", *qns)); err != nil {
		return err
	}
	if *apiAddr != "" {
		roles[0].api = *apiAddr
	}
	if *metricsAddr != "" {
		roles[0].metrics = *metricsAddr
	}
	defer func() {
		for i := len(roles) - 1; i >= 0; i-- {
			roles[i].stop()
		}
	}()
	for _, r := range roles {
		if err := r.start(*bin, *dir, cfgPath); err != nil {
			return err
		}
		fmt.Printf("%s-%d: internal %s, metrics %s%s, log %s\n", r.name, r.index, r.internal, r.metrics,
			map[bool]string{true: ", Milvus API " + r.api}[r.api != ""], r.logPath(*dir))
	}
	fmt.Printf("ready: connect Milvus clients to %s (Ctrl-C stops the cluster; data stays in %s)\n", roles[0].api, *dir)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}

func (r *role) logPath(dir string) string {
	return filepath.Join(dir, fmt.Sprintf("%s-%d.log", r.name, r.index))
}

// start starts the process and waits until its /healthz answers (a
// standby coordinator answers 503 "standby": started is enough).
func (r *role) start(bin, dir, cfg string) error {
	log, err := os.Create(r.logPath(dir))
	if err != nil {
		return err
	}
	args := []string{
		"run", r.name, "--config", cfg, "--data-dir", filepath.Join(dir, fmt.Sprintf("%s-%d", r.name, r.index)),
		"--internal-addr", r.internal, "--metrics-addr", r.metrics,
	}
	if r.api != "" {
		args = append(args, "--addr", r.api)
	}
	r.cmd = exec.Command(bin, args...)
	r.cmd.Stdout, r.cmd.Stderr = log, log
	if err := r.cmd.Start(); err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + r.metrics + "/healthz"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK || (r.name == "coordinator" && r.index > 1) {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s-%d did not become healthy in 60 s; see %s", r.name, r.index, r.logPath(dir))
}

func (r *role) stop() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = r.cmd.Process.Kill()
		<-done
	}
}
