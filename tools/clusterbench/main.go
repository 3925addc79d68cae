// Command clusterbench measures what cluster mode costs a search (issue 18,
// docs/bench/cluster.md). It starts etcd, an Apache Kafka 4 broker and
// Versity S3 Gateway (internal/enginelaunch; install them with
// `.ci/engines.sh` and `.ci/engines.sh etcd`), then on those same engines a
// standalone server and a cluster of processes (`strata run coordinator`,
// `datanode`, `querynode`), each under its own etcd roots, S3 bucket and
// Kafka topic prefix. Both get the same rows and the same HNSW index, and
// the same Go SDK client searches them, alternating, at each client thread
// count:
//
//  1. the extra hop: standalone vs 1 coordinator + 1 query node + 1 data node;
//  2. two query nodes: the collection loaded with replica_number=2 on two
//     query nodes vs one replica (one query node serving), alternating by
//     release and load;
//  3. CPU profiles of the coordinator, the query node and the standalone
//     during a search run (`"pprof": true`), written to --dir;
//  4. etcd keys and watchers per query node, bytes per search over the hop.
//
// CPU is the utime+stime of every Strata process (/proc/PID/stat) before and
// after a run; the engines' CPU is not counted. It prints Markdown tables.
//
// With --via-proxy it measures only the proxy hop instead: one cluster
// with a proxy process (`strata run proxy`), inserts and searches sent
// alternately to the coordinator's own API and to the proxy's
// (viaproxy.go).
//
//	go run ./tools/clusterbench --dir /tmp/clusterbench [--rows 100000] [--duration 10s] [--rounds 3] [--via-proxy]
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"

	"github.com/strata-db/strata/internal/enginelaunch"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "clusterbench:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	dir, bin        string
	rows, dim       int
	centers         int
	duration        time.Duration
	rounds          int
	threads         []int
	threads2        []int
	profile         time.Duration
	skipReplicas    bool
	efConstruction  int
	ef, topK, shard int
	viaProxy        bool
	insertBatch     int
	spread          bool
	segments        int
}

func parseFlags() (options, error) {
	var o options
	var threads, threads2 string
	flag.StringVar(&o.dir, "dir", "clusterbench", "directory of the engines' and processes' data, logs and profiles")
	flag.StringVar(&o.bin, "strata", "", "strata binary (default: go build ./cmd/strata into --dir)")
	flag.IntVar(&o.rows, "rows", 100000, "rows inserted")
	flag.IntVar(&o.dim, "dim", 128, "vector dimension")
	flag.IntVar(&o.centers, "centers", 100, "clusters the vectors are drawn around")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "length of one measured run")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds of alternating runs")
	flag.StringVar(&threads, "threads", "1,4", "client thread counts of the hop comparison")
	flag.StringVar(&threads2, "threads2", "4,8", "client thread counts of the replica comparison")
	flag.DurationVar(&o.profile, "profile", 10*time.Second, "length of the CPU profiles (0: none)")
	flag.BoolVar(&o.skipReplicas, "skip-replicas", false, "skip the two-query-node comparison")
	flag.IntVar(&o.efConstruction, "ef-construction", 200, "HNSW efConstruction (M is 16)")
	flag.IntVar(&o.ef, "ef", 64, "HNSW search ef")
	flag.IntVar(&o.topK, "topk", 10, "top K")
	flag.IntVar(&o.shard, "shards", 1, "shards (vchannels) of the collection")
	flag.BoolVar(&o.viaProxy, "via-proxy", false, "measure only the proxy hop: a cluster's inserts and searches through a proxy process vs through the coordinator's own API")
	flag.IntVar(&o.insertBatch, "insert-batch", 100, "rows per insert of the --via-proxy insert runs")
	flag.BoolVar(&o.spread, "spread", false, "section 2 compares one query node holding every sealed segment with two holding half each (queryCoord.spreadSegments), instead of replica_number 2 vs 1")
	flag.IntVar(&o.segments, "segments", 1, "sealed segments the rows are flushed into (one flush per part)")
	flag.Parse()
	var err error
	if o.threads, err = parseInts(threads); err != nil {
		return o, fmt.Errorf("--threads: %w", err)
	}
	if o.threads2, err = parseInts(threads2); err != nil {
		return o, fmt.Errorf("--threads2: %w", err)
	}
	if o.rows <= 0 || o.dim <= 0 || o.centers <= 0 || o.rounds <= 0 || o.duration <= 0 {
		return o, errors.New("--rows, --dim, --centers, --rounds and --duration must be positive")
	}
	return o, nil
}

// parseInts parses a comma-separated list of positive integers.
func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

const coll = "bench"

func run() error {
	o, err := parseFlags()
	if err != nil {
		return err
	}
	if o.dir, err = filepath.Abs(o.dir); err != nil {
		return err
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	if o.bin == "" {
		o.bin = filepath.Join(o.dir, "strata")
		build := exec.Command("go", "build", "-o", o.bin, "./cmd/strata")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build ./cmd/strata (run from the repository root): %w", err)
		}
	}
	etcd, err := enginelaunch.Etcd(filepath.Join(o.dir, "etcd"), "")
	if err != nil {
		return err
	}
	defer etcd.Stop()
	kafka, err := enginelaunch.Kafka(filepath.Join(o.dir, "kafka"), "")
	if err != nil {
		return err
	}
	defer kafka.Stop()
	s3, err := enginelaunch.S3(filepath.Join(o.dir, "s3"), "")
	if err != nil {
		return err
	}
	defer s3.Stop()
	logf("engines: %s, %s, %s", etcd, kafka, s3)

	if o.viaProxy {
		return runViaProxy(o, etcd, kafka, s3)
	}
	saCfg, err := writeConfig(o.dir, "standalone", etcd, kafka, s3)
	if err != nil {
		return err
	}
	clExtra := map[string]any{}
	if o.spread {
		clExtra["queryCoord"] = map[string]any{"spreadSegments": true}
	}
	clCfg, err := writeConfigWith(o.dir, "cluster", etcd, kafka, s3, clExtra)
	if err != nil {
		return err
	}
	var procs []*proc
	defer func() {
		for i := len(procs) - 1; i >= 0; i-- {
			procs[i].Stop()
		}
	}()
	start := func(role, name, cfg string) (*proc, error) {
		p, err := startProc(o.bin, o.dir, cfg, role, name)
		if p != nil {
			procs = append(procs, p)
		}
		return p, err
	}
	sa, err := start("standalone", "standalone", saCfg)
	if err != nil {
		return err
	}
	coord, err := start("coordinator", "coordinator", clCfg)
	if err != nil {
		return err
	}
	dn, err := start("datanode", "datanode", clCfg)
	if err != nil {
		return err
	}
	qn1, err := start("querynode", "querynode-1", clCfg)
	if err != nil {
		return err
	}

	ctx := context.Background()
	standalone := &deployment{name: "standalone", procs: []*proc{sa}}
	cluster := &deployment{name: "cluster", procs: []*proc{coord, qn1, dn}}
	for _, d := range []*deployment{standalone, cluster} {
		if d.client, err = milvusclient.New(ctx, &milvusclient.ClientConfig{Address: d.procs[0].API}); err != nil {
			return err
		}
		defer func() { _ = d.client.Close(ctx) }()
	}

	data := newDataset(o)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, d := range []*deployment{standalone, cluster} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			errs[i] = prepare(ctx, d.client, o, data)
			logf("%s: %d rows inserted, flushed, indexed and loaded in %v", d.name, o.rows, time.Since(t0).Round(time.Second))
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	// The same answers from both: the hop changes nothing but the cost.
	same, err := sameResults(ctx, standalone.client, cluster.client, o, data.queries[:50])
	if err != nil {
		return err
	}
	logf("standalone and cluster return the same top %d for %d of 50 queries", o.topK, same)

	fmt.Printf("## Setup\n\n%d × %d vectors around %d centers, HNSW M 16 efConstruction %d, L2, %d shard(s); search ef %d, top %d, consistency Eventually; runs of %v, %d rounds.\n\n",
		o.rows, o.dim, o.centers, o.efConstruction, o.shard, o.ef, o.topK, o.duration, o.rounds)

	// Idle CPU: what each deployment burns with no client (time ticks,
	// keep-alives, Kafka consumers), so that it can be told from the
	// searches' CPU.
	fmt.Printf("## Idle CPU (no client, %v)\n\n| deployment | CPU ms/s |\n|---|---:|\n", o.duration)
	for _, d := range []*deployment{standalone, cluster} {
		if d.idleMsPerS, err = idleCPU(d, o.duration); err != nil {
			return err
		}
		fmt.Printf("| %s | %.1f |\n", d.name, d.idleMsPerS)
	}

	// 1. The hop.
	fmt.Printf("\n## 1. The extra hop: standalone vs coordinator + query node + data node\n\n")
	fmt.Print(resultHeader)
	results, err := alternate(o, standalone, cluster, func(d *deployment, th int) (result, error) {
		return measure(ctx, d, th, o, data.queries, qn1)
	})
	if err != nil {
		return err
	}
	fmt.Printf("\nMedians over the rounds, and cluster / standalone:\n\n")
	fmt.Print(summaryHeader)
	for _, th := range o.threads {
		fmt.Print(summary(results, th, "standalone", "cluster"))
	}
	hopBytes(results)

	// 3. Where the time goes.
	if o.profile > 0 {
		if err := profile(ctx, o, []*deployment{cluster, standalone}, data.queries); err != nil {
			return err
		}
	}

	// 4. etcd per query node, then 2. two query nodes.
	before, err := etcdLoad(ctx, etcd.Addr)
	if err != nil {
		return err
	}
	qn2, err := start("querynode", "querynode-2", clCfg)
	if err != nil {
		return err
	}
	time.Sleep(3 * time.Second) // its watches and session settle
	after, err := etcdLoad(ctx, etcd.Addr)
	if err != nil {
		return err
	}
	fmt.Printf("\n## 4. etcd load\n\n| | keys (all roots) | keys under strata-cluster/ | watchers (etcd_debugging_mvcc_watcher_total) |\n|---|---:|---:|---:|\n")
	fmt.Printf("| 1 coordinator, 1 data node, 1 query node (+ the standalone) | %d | %d | %d |\n", before.keys, before.clusterKeys, before.watchers)
	fmt.Printf("| one more query node | %d | %d | %d |\n", after.keys, after.clusterKeys, after.watchers)
	fmt.Printf("| per query node | %+d | %+d | %+d |\n", after.keys-before.keys, after.clusterKeys-before.clusterKeys, after.watchers-before.watchers)

	if o.skipReplicas {
		return nil
	}
	if o.spread {
		return spreadRuns(ctx, o, cluster, coord, qn1, qn2, dn, data, func(name string) (*proc, error) {
			return start("querynode", name, clCfg)
		})
	}
	cluster2 := &deployment{name: "2 query nodes, replica_number=2", client: cluster.client, procs: []*proc{coord, qn1, qn2, dn}}
	cluster1 := &deployment{name: "1 replica (1 query node serving)", client: cluster.client, procs: []*proc{coord, qn1, qn2, dn}}
	idle, err := idleCPU(cluster2, o.duration)
	if err != nil {
		return err
	}
	cluster1.idleMsPerS, cluster2.idleMsPerS = idle, idle
	fmt.Printf("\n## 2. Two query nodes (replica_number=2) vs one replica\n\nCPU counts every process, both query nodes in both rows (idle: %.1f ms/s).\n\n", idle)
	fmt.Print(resultHeader)
	var results2 []result
	for r := 0; r < o.rounds; r++ {
		order := []*deployment{cluster1, cluster2}
		if r%2 == 1 {
			order = []*deployment{cluster2, cluster1}
		}
		for _, d := range order {
			replicas := 1
			if d == cluster2 {
				replicas = 2
			}
			if err := reload(ctx, d.client, replicas); err != nil {
				return err
			}
			for _, th := range o.threads2 {
				res, err := measure(ctx, d, th, o, data.queries, nil)
				if err != nil {
					return err
				}
				results2 = keep(results2, res, r+1)
			}
		}
	}
	fmt.Printf("\nMedians, and 2 replicas / 1 replica:\n\n")
	fmt.Print(summaryHeader)
	for _, th := range o.threads2 {
		fmt.Print(summary(results2, th, cluster1.name, cluster2.name))
	}
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+format+"\n", args...)
}

// writeConfig writes the configuration of one deployment: its own meta and
// membership roots in etcd, its own bucket and Kafka topic prefix, pprof on.
func writeConfig(dir, name string, etcd, kafka, s3 *enginelaunch.Process) (string, error) {
	return writeConfigWith(dir, name, etcd, kafka, s3, nil)
}

// writeConfigWith is writeConfig with extra top-level sections.
func writeConfigWith(dir, name string, etcd, kafka, s3 *enginelaunch.Process, extra map[string]any) (string, error) {
	p := filepath.Join(dir, name+".json")
	sections := map[string]any{"pprof": true}
	for k, v := range extra {
		sections[k] = v
	}
	return p, enginelaunch.WriteConfig(p, enginelaunch.Config(etcd.Addr, kafka.Addr, s3.Addr, name, sections))
}

// proc is one Strata process of a deployment.
type proc struct {
	*enginelaunch.Strata
	name string
}

// startProc starts `strata standalone` or `strata run ROLE` and waits
// until /healthz answers 200.
func startProc(bin, dir, cfg, role, name string) (*proc, error) {
	s, err := enginelaunch.StartStrata(bin, role, enginelaunch.StrataOptions{
		Config: cfg, DataDir: filepath.Join(dir, name), Log: filepath.Join(dir, name+".log"),
	})
	if err != nil {
		return nil, err
	}
	logf("%s: pid %d, metrics %s%s", name, s.PID(), s.Metrics, map[bool]string{true: ", API " + s.API}[s.API != ""])
	return &proc{Strata: s, name: name}, nil
}

// msPerTick converts /proc clock ticks to milliseconds (USER_HZ is 100 on
// every Linux architecture Go supports).
const msPerTick = 10.0

// cpuTicks is utime+stime of a process in clock ticks, from a
// /proc/PID/stat line.
func cpuTicks(stat string) (int64, error) {
	// The command name (field 2) is in parentheses and may hold spaces:
	// fields are counted after its closing one.
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("clusterbench: malformed /proc stat %q", stat)
	}
	f := strings.Fields(stat[i+1:])
	// After the name: state(3) ppid ... utime(14) stime(15).
	if len(f) < 13 {
		return 0, fmt.Errorf("clusterbench: /proc stat has %d fields after the name, want at least 13", len(f))
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("clusterbench: /proc stat: %w", err)
	}
	return u + s, nil
}

func (p *proc) cpu() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.PID()))
	if err != nil {
		return 0, err
	}
	return cpuTicks(string(b))
}

// ioBytes is rchar+wchar of a process (/proc/PID/io): every byte read or
// written through a system call, sockets included.
func (p *proc) ioBytes() (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/io", p.PID()))
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	return parseIO(f)
}

// parseIO sums rchar and wchar of a /proc/PID/io document.
func parseIO(r io.Reader) (int64, error) {
	var sum int64
	var seen int
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "rchar" && k != "wchar") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("clusterbench: /proc io %s: %w", k, err)
		}
		sum += n
		seen++
	}
	if seen != 2 {
		return 0, errors.New("clusterbench: /proc io without rchar and wchar")
	}
	return sum, sc.Err()
}

// deployment is the processes behind one Milvus API address.
type deployment struct {
	name       string
	client     *milvusclient.Client
	procs      []*proc
	idleMsPerS float64
}

// cpu is the CPU ticks of all its processes.
func (d *deployment) cpu() (int64, error) {
	var sum int64
	for _, p := range d.procs {
		n, err := p.cpu()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", p.name, err)
		}
		sum += n
	}
	return sum, nil
}

// idleCPU is the CPU milliseconds per second d's processes use over a
// while with no client.
func idleCPU(d *deployment, over time.Duration) (float64, error) {
	c0, err := d.cpu()
	if err != nil {
		return 0, err
	}
	time.Sleep(over)
	c1, err := d.cpu()
	if err != nil {
		return 0, err
	}
	return float64(c1-c0) * msPerTick / over.Seconds(), nil
}

// dataset is the rows and the queries.
type dataset struct {
	vecs    [][]float32
	queries [][]float32
}

// newDataset draws rows and 1000 queries around the same centers.
func newDataset(o options) dataset {
	rng := rand.New(rand.NewPCG(18, 18))
	centers := make([][]float32, o.centers)
	for i := range centers {
		centers[i] = make([]float32, o.dim)
		for j := range centers[i] {
			centers[i][j] = rng.Float32()*2 - 1
		}
	}
	draw := func(n int) [][]float32 {
		out := make([][]float32, n)
		for i := range out {
			c := centers[rng.IntN(len(centers))]
			v := make([]float32, o.dim)
			for j := range v {
				v[j] = c[j] + float32(rng.NormFloat64()*0.1)
			}
			out[i] = v
		}
		return out
	}
	return dataset{vecs: draw(o.rows), queries: draw(1000)}
}

// prepare creates the collection, inserts the rows, flushes, builds the
// index and loads it.
func prepare(ctx context.Context, c *milvusclient.Client, o options, data dataset) error {
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("vector").WithDataType(entity.FieldTypeFloatVector).WithDim(int64(o.dim)))
	if err := c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema).WithShardNum(int32(o.shard))); err != nil {
		return err
	}
	const batch = 5000
	part := (len(data.vecs) + max(o.segments, 1) - 1) / max(o.segments, 1) // rows per sealed segment
	for lo := 0; lo < len(data.vecs); {
		hi := min(lo+batch, len(data.vecs), (lo/part+1)*part)
		ids := make([]int64, hi-lo)
		for i := range ids {
			ids[i] = int64(lo + i)
		}
		if _, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).
			WithInt64Column("id", ids).WithFloatVectorColumn("vector", o.dim, data.vecs[lo:hi])); err != nil {
			return err
		}
		if hi%part == 0 || hi == len(data.vecs) {
			ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
			if err != nil {
				return err
			}
			if err := ft.Await(ctx); err != nil {
				return err
			}
		}
		lo = hi
	}
	it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "vector", index.NewHNSWIndex(entity.L2, 16, o.efConstruction)))
	if err != nil {
		return err
	}
	if err := it.Await(ctx); err != nil {
		return err
	}
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	if err != nil {
		return err
	}
	return lt.Await(ctx)
}

// reload releases the collection and loads it with replicas replicas.
func reload(ctx context.Context, c *milvusclient.Client, replicas int) error {
	if err := c.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption(coll)); err != nil {
		return err
	}
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll).WithReplica(replicas))
	if err != nil {
		return err
	}
	return lt.Await(ctx)
}

func searchOption(o options, q []float32) milvusclient.SearchOption {
	return milvusclient.NewSearchOption(coll, o.topK, []entity.Vector{entity.FloatVector(q)}).
		WithAnnParam(index.NewHNSWAnnParam(o.ef)).WithConsistencyLevel(entity.ClEventually)
}

// sameResults counts the queries whose top-K IDs both deployments return
// alike.
func sameResults(ctx context.Context, a, b *milvusclient.Client, o options, queries [][]float32) (int, error) {
	same := 0
	for _, q := range queries {
		ra, err := a.Search(ctx, searchOption(o, q))
		if err != nil {
			return 0, err
		}
		rb, err := b.Search(ctx, searchOption(o, q))
		if err != nil {
			return 0, err
		}
		if slices.Equal(ids(ra[0]), ids(rb[0])) {
			same++
		}
	}
	return same, nil
}

func ids(rs milvusclient.ResultSet) []int64 {
	out := make([]int64, rs.ResultCount)
	for i := range out {
		out[i], _ = rs.IDs.GetAsInt64(i)
	}
	return out
}

// result is one measured run.
type result struct {
	deployment string
	threads    int
	round      int
	queries    int
	qps        float64
	p50, p99   time.Duration
	cpuMsPerQ  float64 // every Strata process of the deployment
	netMsPerQ  float64 // the same less the deployment's idle CPU over the run
	hopBytes   float64 // query node rchar+wchar per query (0: not measured)
}

const resultHeader = "| deployment | threads | round | queries | QPS | p50 ms | p99 ms | CPU ms/query | CPU ms/query less idle |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"

func (r result) row() string {
	return fmt.Sprintf("| %s | %d | %d | %d | %.0f | %.2f | %.2f | %.3f | %.3f |\n", r.deployment, r.threads, r.round, r.queries,
		r.qps, ms(r.p50), ms(r.p99), r.cpuMsPerQ, r.netMsPerQ)
}

// alternate runs a and b at each thread count of o, o.rounds times, a
// first in odd rounds and b first in even ones, printing each run's row.
func alternate(o options, a, b *deployment, run func(d *deployment, threads int) (result, error)) ([]result, error) {
	var results []result
	for r := 0; r < o.rounds; r++ {
		for _, th := range o.threads {
			order := []*deployment{a, b}
			if r%2 == 1 {
				order = []*deployment{b, a}
			}
			for _, d := range order {
				res, err := run(d, th)
				if err != nil {
					return nil, err
				}
				results = keep(results, res, r+1)
			}
		}
	}
	return results, nil
}

// keep numbers res as round's run, prints its row and appends it.
func keep(results []result, res result, round int) []result {
	res.round = round
	fmt.Print(res.row())
	return append(results, res)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// measure runs threads clients searching d for o.duration.
func measure(ctx context.Context, d *deployment, threads int, o options, queries [][]float32, hop *proc) (result, error) {
	search := func(ctx context.Context, c *milvusclient.Client, i int) error {
		_, err := c.Search(ctx, searchOption(o, queries[i%len(queries)]))
		return err
	}
	return measureOp(ctx, d, threads, o.duration, "search", search, hop)
}

// measureOp runs threads clients calling op (i: the call's index) on d
// for duration.
func measureOp(ctx context.Context, d *deployment, threads int, duration time.Duration, what string,
	op func(ctx context.Context, c *milvusclient.Client, i int) error, hop *proc,
) (result, error) {
	c0, err := d.cpu()
	if err != nil {
		return result{}, err
	}
	var io0 int64
	if hop != nil {
		if io0, err = hop.ioBytes(); err != nil {
			return result{}, err
		}
	}
	lat := make([][]time.Duration, threads)
	errs := make([]error, threads)
	start := time.Now()
	stop := start.Add(duration)
	var wg sync.WaitGroup
	for t := 0; t < threads; t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := t * 97; time.Now().Before(stop); i++ {
				t0 := time.Now()
				if err := op(ctx, d.client, i); err != nil {
					errs[t] = fmt.Errorf("%s: %s: %w", d.name, what, err)
					return
				}
				lat[t] = append(lat[t], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return result{}, err
	}
	c1, err := d.cpu()
	if err != nil {
		return result{}, err
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	n := len(all)
	if n == 0 {
		return result{}, fmt.Errorf("%s: no %s completed in %v", d.name, what, duration)
	}
	cpuMs := float64(c1-c0) * msPerTick
	r := result{
		deployment: d.name, threads: threads, queries: n, qps: float64(n) / elapsed.Seconds(),
		p50: all[n/2], p99: all[min(n-1, n*99/100)],
		cpuMsPerQ: cpuMs / float64(n),
		netMsPerQ: (cpuMs - d.idleMsPerS*elapsed.Seconds()) / float64(n),
	}
	if hop != nil {
		io1, err := hop.ioBytes()
		if err != nil {
			return result{}, err
		}
		r.hopBytes = float64(io1-io0) / float64(n)
	}
	return r, nil
}

const summaryHeader = "| threads | QPS a → b | ratio | p50 ms a → b | ratio | p99 ms a → b | ratio | CPU ms/query a → b | ratio |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"

// summary is the row comparing the medians of deployments a and b at one
// thread count.
func summary(rs []result, threads int, a, b string) string {
	med := func(name string, f func(result) float64) float64 {
		var v []float64
		for _, r := range rs {
			if r.deployment == name && r.threads == threads {
				v = append(v, f(r))
			}
		}
		return median(v)
	}
	qps := func(r result) float64 { return r.qps }
	p50 := func(r result) float64 { return ms(r.p50) }
	p99 := func(r result) float64 { return ms(r.p99) }
	cpu := func(r result) float64 { return r.cpuMsPerQ }
	cell := func(f func(result) float64, format string) string {
		x, y := med(a, f), med(b, f)
		return fmt.Sprintf(format+" → "+format+" | %.2f", x, y, y/x)
	}
	return fmt.Sprintf("| %d | %s | %s | %s | %s |\n", threads, cell(qps, "%.0f"), cell(p50, "%.2f"), cell(p99, "%.2f"), cell(cpu, "%.3f"))
}

// median of v (0 when empty).
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// hopBytes prints the query node's socket and file bytes per search.
func hopBytes(rs []result) {
	var v []float64
	for _, r := range rs {
		if r.hopBytes > 0 {
			v = append(v, r.hopBytes)
		}
	}
	if len(v) > 0 {
		fmt.Printf("\nQuery node rchar+wchar per search (the request in and the answer out over the hop, plus its share of etcd and Kafka reads during the run): median %.0f bytes over %d runs.\n", median(v), len(v))
	}
}

// profile takes CPU profiles of each deployment's processes while 4 client
// threads search it, and writes them to the run directory.
func profile(ctx context.Context, o options, ds []*deployment, queries [][]float32) error {
	fmt.Printf("\n## 3. CPU profiles (%v, 4 client threads)\n\n", o.profile)
	for _, d := range ds {
		var wg sync.WaitGroup
		errs := make([]error, len(d.procs))
		for i, p := range d.procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				path := filepath.Join(o.dir, fmt.Sprintf("cpu-%s.pprof", p.name))
				errs[i] = fetchProfile(ctx, p.Metrics, o.profile, path)
				if errs[i] == nil {
					fmt.Printf("- %s: `go tool pprof -top %s %s`\n", p.name, o.bin, path)
				}
			}()
		}
		po := o
		po.duration = o.profile + time.Second
		res, err := measure(ctx, d, 4, po, queries, nil)
		if err != nil {
			return err
		}
		wg.Wait()
		fmt.Printf("  (%s: %d searches, %.0f QPS, %.3f CPU ms/search during the profile)\n", d.name, res.queries, res.qps, res.cpuMsPerQ)
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	return nil
}

func fetchProfile(ctx context.Context, metrics string, d time.Duration, path string) error {
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", metrics, int(d.Seconds()))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s (is \"pprof\": true?)", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// etcdCounts are the keys and watchers etcd holds.
type etcdCounts struct {
	keys, clusterKeys, watchers int64
}

// etcdLoad counts etcd's keys (its JSON gateway, /v3/kv/range) and reads
// its watcher gauge (/metrics).
func etcdLoad(ctx context.Context, url string) (etcdCounts, error) {
	var c etcdCounts
	var err error
	// "\x00" to "\x00" is every key.
	if c.keys, err = etcdCount(ctx, url, "\x00", "\x00"); err != nil {
		return c, err
	}
	if c.clusterKeys, err = etcdCount(ctx, url, "strata-cluster/", "strata-cluster0"); err != nil {
		return c, err
	}
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		return c, err
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "etcd_debugging_mvcc_watcher_total "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return c, err
			}
			c.watchers = int64(f)
		}
	}
	return c, sc.Err()
}

// etcdCount counts the keys in [key, end) through etcd's JSON gateway.
func etcdCount(ctx context.Context, url, key, end string) (int64, error) {
	body, err := json.Marshal(map[string]any{
		"key": base64.StdEncoding.EncodeToString([]byte(key)), "range_end": base64.StdEncoding.EncodeToString([]byte(end)),
		"count_only": true,
	})
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v3/kv/range", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("etcd /v3/kv/range: %s", resp.Status)
	}
	var out struct {
		Count string `json:"count"` // int64 as a JSON string; absent when 0
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return 0, fmt.Errorf("etcd /v3/kv/range: %w", err)
	}
	if out.Count == "" {
		return 0, nil
	}
	return strconv.ParseInt(out.Count, 10, 64)
}

// spreadRuns is section 2 with --spread: one replica on one query node
// holding every sealed segment against one replica on two query nodes
// (the shard leader and a worker, half the rows each), alternating: the
// second node is stopped and started again between them, and the
// collection reloaded (a load takes every live node into its replica).
func spreadRuns(ctx context.Context, o options, cluster *deployment, coord, qn1, qn2, dn *proc, data dataset,
	startQN func(name string) (*proc, error),
) error {
	one := &deployment{name: "1 query node, all segments", client: cluster.client, procs: []*proc{coord, qn1, dn}}
	two := &deployment{name: "2 query nodes, half each", client: cluster.client, procs: []*proc{coord, qn1, qn2, dn}}
	fmt.Printf("\n## 2. One query node vs two holding half the sealed segments each (%d segments)\n\n", o.segments)
	fmt.Print(resultHeader)
	var results []result
	running := true
	for r := 0; r < o.rounds; r++ {
		order := []*deployment{two, one}
		if r%2 == 1 {
			order = []*deployment{one, two}
		}
		for _, d := range order {
			switch {
			case d == one && running:
				qn2.Stop()
				running = false
			case d == two && !running:
				var err error
				if qn2, err = startQN(fmt.Sprintf("querynode-2-%d", r)); err != nil {
					return err
				}
				two.procs[2] = qn2
				running = true
			}
			time.Sleep(3 * time.Second) // the coordinator sees the node come or go
			if err := reload(ctx, d.client, 1); err != nil {
				return err
			}
			time.Sleep(2 * time.Second) // the spread after the load settles
			for _, th := range o.threads2 {
				res, err := measure(ctx, d, th, o, data.queries, nil)
				if err != nil {
					return err
				}
				results = keep(results, res, r+1)
			}
		}
	}
	fmt.Printf("\nMedians, and two / one:\n\n")
	fmt.Print(summaryHeader)
	for _, th := range o.threads2 {
		fmt.Print(summary(results, th, one.name, two.name))
	}
	return nil
}
