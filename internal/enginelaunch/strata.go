package enginelaunch

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Config returns a Strata configuration document (`--config FILE`) putting
// every port on these engines: etcd's client URL, a Kafka broker's and the
// S3 server's addresses. name keeps deployments that share the
// engines apart ("": the defaults, etcd roots "strata/" and
// "strata/cluster/", bucket "strata", no topic prefix); extra top-level
// sections are merged in.
func Config(etcd, kafka, s3, name string, extra map[string]any) map[string]any {
	root, bucket, prefix := "strata/", "strata", ""
	if name != "" {
		root, bucket, prefix = "strata-"+name+"/meta/", "strata-"+name, name+"-"
	}
	doc := map[string]any{"engines": map[string]any{
		"meta": map[string]any{"type": "etcd", "etcd": map[string]any{"endpoints": []string{etcd}, "root": root}},
		"objects": map[string]any{"type": "s3", "s3": map[string]any{
			"endpoint": s3, "bucket": bucket, "createBucket": true,
			"accessKey": S3AccessKey, "secretKey": S3SecretKey,
		}},
		"wal": map[string]any{"type": "kafka", "kafka": map[string]any{"brokers": []string{kafka}, "topicPrefix": prefix}},
	}}
	if name != "" {
		doc["cluster"] = map[string]any{"membership": map[string]any{"root": "strata-" + name + "/cluster/"}}
	}
	for k, v := range extra {
		doc[k] = v
	}
	return doc
}

// WriteConfig writes doc as JSON to path.
func WriteConfig(path string, doc map[string]any) error {
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Strata is a Strata server process: `strata standalone` (Role
// "standalone") or `strata run ROLE`, on loopback ports.
type Strata struct {
	// Role is "standalone", "coordinator", "querynode" or "datanode".
	Role string
	// API is the Milvus API address (standalone and coordinator; "" else),
	// Internal the internal RPC address (clustered roles), Metrics the
	// metrics port's.
	API, Internal, Metrics string
	cmd                    *exec.Cmd
	done                   chan struct{}
}

// StrataOptions are the addresses and files of a Strata process; an empty
// address is a free loopback port.
type StrataOptions struct {
	Config, DataDir, Log string
	API, Metrics         string
	// Standby: a coordinator that may wait as a standby is started once
	// /healthz answers at all (a standby answers 503).
	Standby bool
	// Ready bounds the wait for /healthz (default 90 s).
	Ready time.Duration
}

// StartStrata starts bin as role and waits until its /healthz answers 200
// (any answer with Standby).
func StartStrata(bin, role string, o StrataOptions) (*Strata, error) {
	s := &Strata{Role: role, API: o.API, Metrics: o.Metrics, done: make(chan struct{})}
	free := func(addr *string) error {
		var err error
		if *addr == "" {
			*addr, err = FreeAddr()
		}
		return err
	}
	args := []string{"standalone"}
	if role != "standalone" {
		args = []string{"run", role}
		if err := free(&s.Internal); err != nil {
			return nil, err
		}
		args = append(args, "--internal-addr", s.Internal)
	}
	if err := free(&s.Metrics); err != nil {
		return nil, err
	}
	args = append(args, "--config", o.Config, "--data-dir", o.DataDir, "--metrics-addr", s.Metrics, "--log-level", "warn")
	if role == "standalone" || role == "coordinator" || role == "proxy" {
		if err := free(&s.API); err != nil {
			return nil, err
		}
		args = append(args, "--addr", s.API)
	}
	log, err := os.Create(o.Log)
	if err != nil {
		return nil, err
	}
	defer func() { _ = log.Close() }() // the child holds its own descriptor
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	ready := o.Ready
	if ready == 0 {
		ready = 90 * time.Second
	}
	for deadline := time.Now().Add(ready); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case <-s.done:
			return nil, fmt.Errorf("enginelaunch: strata %s exited during start; see %s", role, o.Log)
		default:
		}
		if resp, err := http.Get("http://" + s.Metrics + "/healthz"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK || o.Standby {
				return s, nil
			}
		}
	}
	s.Stop()
	return nil, fmt.Errorf("enginelaunch: strata %s did not become healthy in %v; see %s", role, ready, o.Log)
}

// PID is the process's ID.
func (s *Strata) PID() int { return s.cmd.Process.Pid }

// Stop stops the process with SIGTERM, SIGKILL after 15 s, and waits.
func (s *Strata) Stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}
