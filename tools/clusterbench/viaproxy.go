package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/milvus-io/milvus/client/v2/milvusclient"

	"github.com/strata-db/strata/internal/enginelaunch"
)

// runViaProxy measures the proxy hop (--via-proxy): one cluster (a
// coordinator, a data node, a query node and a proxy process), its
// inserts and searches sent alternately to the coordinator's own API and
// to the proxy's, which reaches the coordinator over internal RPC (catalog
// from its cache, the WAL append and the reads on the coordinator). CPU
// counts every Strata process of the cluster in both rows.
func runViaProxy(o options, etcd, kafka, s3 *enginelaunch.Process) error {
	cfg, err := writeConfig(o.dir, "cluster", etcd, kafka, s3)
	if err != nil {
		return err
	}
	var procs []*proc
	defer func() {
		for i := len(procs) - 1; i >= 0; i-- {
			procs[i].Stop()
		}
	}()
	for _, r := range [][2]string{{"coordinator", "coordinator"}, {"datanode", "datanode"}, {"querynode", "querynode-1"}, {"proxy", "proxy-1"}} {
		p, err := startProc(o.bin, o.dir, cfg, r[0], r[1])
		if err != nil {
			return err
		}
		procs = append(procs, p)
	}
	ctx := context.Background()
	direct := &deployment{name: "coordinator API", procs: procs}
	viaProxy := &deployment{name: "via proxy", procs: procs}
	for _, d := range []*deployment{direct, viaProxy} {
		api := procs[0].API
		if d == viaProxy {
			api = procs[3].API
		}
		if d.client, err = milvusclient.New(ctx, &milvusclient.ClientConfig{Address: api}); err != nil {
			return err
		}
		defer func() { _ = d.client.Close(ctx) }()
	}
	data := newDataset(o)
	t0 := time.Now()
	if err := prepare(ctx, direct.client, o, data); err != nil {
		return err
	}
	logf("cluster: %d rows inserted, flushed, indexed and loaded in %v", o.rows, time.Since(t0).Round(time.Second))
	same, err := sameResults(ctx, direct.client, viaProxy.client, o, data.queries[:50])
	if err != nil {
		return err
	}
	logf("coordinator and proxy return the same top %d for %d of 50 queries", o.topK, same)
	idle, err := idleCPU(direct, o.duration)
	if err != nil {
		return err
	}
	direct.idleMsPerS, viaProxy.idleMsPerS = idle, idle
	fmt.Printf("## Setup\n\n%d × %d vectors, HNSW M 16 efConstruction %d, L2, %d shard(s); search ef %d, top %d, consistency Eventually; inserts of %d rows; runs of %v, %d rounds. Idle CPU of the four processes: %.1f ms/s.\n\n",
		o.rows, o.dim, o.efConstruction, o.shard, o.ef, o.topK, o.insertBatch, o.duration, o.rounds, idle)

	// Inserts write new keys above the loaded rows, never the same twice.
	var next atomic.Int64
	next.Store(int64(o.rows))
	vecs := data.queries
	insert := func(ctx context.Context, c *milvusclient.Client, _ int) error {
		first := next.Add(int64(o.insertBatch)) - int64(o.insertBatch)
		ids := make([]int64, o.insertBatch)
		rows := make([][]float32, o.insertBatch)
		for i := range ids {
			ids[i] = first + int64(i)
			rows[i] = vecs[int(ids[i])%len(vecs)]
		}
		_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).
			WithInt64Column("id", ids).WithFloatVectorColumn("vector", o.dim, rows))
		return err
	}
	// Searches first, over the indexed rows only; then inserts.
	for _, what := range []string{"search", "insert"} {
		fmt.Printf("## %s: coordinator API vs via a proxy\n\n", what)
		fmt.Print(resultHeader)
		results, err := alternate(o, direct, viaProxy, func(d *deployment, th int) (result, error) {
			if what == "insert" {
				return measureOp(ctx, d, th, o.duration, what, insert, nil)
			}
			return measure(ctx, d, th, o, data.queries, nil)
		})
		if err != nil {
			return err
		}
		fmt.Printf("\nMedians over the rounds, and via proxy / coordinator API:\n\n")
		fmt.Print(summaryHeader)
		for _, th := range o.threads {
			fmt.Print(summary(results, th, direct.name, viaProxy.name))
		}
		fmt.Println()
	}
	if next.Load() == int64(o.rows) {
		return errors.New("clusterbench: no insert ran")
	}
	return nil
}
