// Command cluster runs a development Strata cluster on loopback, every part
// a process of its own: etcd, an Apache Kafka 4 broker and Versity S3
// Gateway (internal/enginelaunch; install them with `.ci/engines.sh` and
// `.ci/engines.sh etcd`), then the coordinators, data nodes, query nodes
// and proxies (`strata run ROLE`). It prints the Milvus API addresses (the
// first coordinator's and every proxy's; any of them serves clients) and
// runs until Ctrl-C or SIGTERM, then stops everything (the data stays
// under --dir).
//
//	go run ./tools/cluster --dir /tmp/strata-cluster [--coordinators 2] [--querynodes 2] [--datanodes 2] [--proxies 2]
//	                       [--addr HOST:PORT] [--metrics-addr HOST:PORT] [--strata BINARY]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/strata-db/strata/internal/enginelaunch"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func run() error {
	dir := flag.String("dir", "strata-cluster", "directory of every process's data and log")
	bin := flag.String("strata", "", "strata binary (default: go build ./cmd/strata into --dir)")
	coords := flag.Int("coordinators", 1, "coordinator processes (the first leads, the others stand by)")
	qns := flag.Int("querynodes", 2, "query node processes")
	dns := flag.Int("datanodes", 2, "data node processes")
	proxies := flag.Int("proxies", 2, "proxy processes (each serves the Milvus API on a port of its own)")
	apiAddr := flag.String("addr", "", "the front process's Milvus API address (default: a free loopback port)")
	metricsAddr := flag.String("metrics-addr", "", "the front process's metrics address (default: a free loopback port)")
	front := flag.String("front", "coordinator", "the process --addr and --metrics-addr are given to: the first coordinator or the first proxy")
	flag.Parse()
	if *front != "coordinator" && *front != "proxy" {
		return fmt.Errorf("--front %q: want coordinator or proxy", *front)
	}
	if *front == "proxy" && *proxies < 1 {
		return errors.New("--front proxy needs --proxies ≥ 1")
	}
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

	cfgPath := filepath.Join(*dir, "strata.json")
	if err := enginelaunch.WriteConfig(cfgPath, enginelaunch.Config(etcd.Addr, kafka.Addr, s3.Addr, "", nil)); err != nil {
		return err
	}

	var procs []*enginelaunch.Strata
	defer func() {
		for i := len(procs) - 1; i >= 0; i-- {
			procs[i].Stop()
		}
	}()
	first := true
	for _, r := range []struct {
		role string
		n    int
	}{{"coordinator", *coords}, {"datanode", *dns}, {"querynode", *qns}, {"proxy", *proxies}} {
		for i := 1; i <= r.n; i++ {
			name := fmt.Sprintf("%s-%d", r.role, i)
			o := enginelaunch.StrataOptions{
				Config: cfgPath, DataDir: filepath.Join(*dir, name), Log: filepath.Join(*dir, name+".log"),
				Standby: r.role == "coordinator" && i > 1, // the later ones wait as standbys (503)
			}
			if first && r.role == *front {
				o.API, o.Metrics, first = *apiAddr, *metricsAddr, false
			}
			p, err := enginelaunch.StartStrata(*bin, r.role, o)
			if err != nil {
				return err
			}
			procs = append(procs, p)
			fmt.Printf("%s: internal %s, metrics %s%s, log %s\n", name, p.Internal, p.Metrics,
				map[bool]string{true: ", Milvus API " + p.API}[p.API != ""], o.Log)
		}
	}
	apis := []string{procs[0].API}
	for _, p := range procs {
		if p.Role == "proxy" {
			apis = append(apis, p.API)
		}
	}
	fmt.Printf("ready: connect Milvus clients to any of %v (Ctrl-C stops the cluster; data stays in %s)\n", apis, *dir)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}
