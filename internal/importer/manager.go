package importer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/msgpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/objstore"
	"github.com/strata-db/strata/internal/storage"
)

// Config configures bulk import.
type Config struct {
	// BatchRows is how many rows are read, checked and routed at a time.
	BatchRows int `json:"batchRows"`
	// MaxFiles is the most tasks (file groups) one request may hold
	// (Milvus's dataCoord.import.maxFilesPerImportReq).
	MaxFiles int `json:"maxFiles"`
	// AllowLocalPaths lets a request name absolute paths on the server's
	// own file system besides object-store keys. Off by default: it lets
	// any client that may import read files the server can read.
	AllowLocalPaths bool `json:"allowLocalPaths"`
	// Retention is how long a finished (Completed or Failed) job stays
	// listed and in the meta store (Milvus's dataCoord.import.taskRetention).
	Retention time.Duration `json:"retention"`
	// SegmentBytes ends an import segment when its rows reach this many
	// bytes in memory; the app sets it from the data coordinator's segment
	// size (segmentMaxSize × sealProportion).
	SegmentBytes int64 `json:"-"`
}

// Defaults returns the default import settings (SegmentBytes is the app's to set).
func Defaults() Config {
	return Config{BatchRows: 4096, MaxFiles: 1024, Retention: 3 * time.Hour}
}

// Validate checks the settings.
func (c Config) Validate() error {
	if c.BatchRows <= 0 || c.MaxFiles <= 0 || c.SegmentBytes <= 0 || c.Retention <= 0 {
		return fmt.Errorf("importer: batchRows, maxFiles, retention and the segment size must be positive (got %d, %d, %s, %d)",
			c.BatchRows, c.MaxFiles, c.Retention, c.SegmentBytes)
	}
	return nil
}

// Files reads an import's files.
type Files interface {
	ReadFile(ctx context.Context, path string) ([]byte, error)
}

// Rows checks a batch of file rows as an insert into the collection would
// be checked (auto-ID keys generated, defaults and nulls filled, functions
// run) and routes them: one insert per partition and vchannel, with row IDs
// (the proxy).
type Rows interface {
	ImportRows(ctx context.Context, coll *catalog.Collection, partition string, fds []*schemapb.FieldData, n int) ([]*msgpb.InsertRequest, error)
	// ImportColumns routes a backup's stored columns (every user field, by
	// ID) as they are: keys are kept, nothing is generated or checked again.
	ImportColumns(ctx context.Context, coll *catalog.Collection, partition string, cols map[int64]column.Column, n int) ([]*msgpb.InsertRequest, error)
	// RouteKeys routes primary keys as a Delete routes them: the row
	// indexes of each vchannel's keys (an L0 import's deletes).
	RouteKeys(coll *catalog.Collection, pks column.Column) map[string][]int
}

// SegmentWriter writes the files of import segments, not registered
// anywhere (the data node).
type SegmentWriter interface {
	WriteImportSegment(ctx context.Context, coll *catalog.Collection, partition int64, vchannel string,
		cols map[int64]column.Column) (catalog.SegmentInfo, error)
	// WriteImportDeletes writes deletes (keys and their timestamps) as the
	// delta log of one new L0 segment of vchannel (an L0 import's).
	WriteImportDeletes(ctx context.Context, coll *catalog.Collection, vchannel string,
		pks column.Column, tss []uint64) (catalog.SegmentInfo, error)
}

// Remover deletes objects (the object store).
type Remover interface {
	Delete(ctx context.Context, key string) error
}

// Committer registers an import's segments (the data coordinator):
// BeginImport keeps garbage collection off files of IDs above marker until
// EndImport; CommitImport records every segment Flushed, with ops, in one
// meta-store transaction.
type Committer interface {
	BeginImport(jobID, marker int64)
	EndImport(jobID int64)
	CommitImport(ctx context.Context, segs []catalog.SegmentInfo, ops ...metastore.Op) error
}

// Serving tells whether the query nodes serve a collection's segments
// (true too when the collection, or the segments' partitions, are not loaded).
type Serving interface {
	Serves(collectionID int64, segs []catalog.SegmentInfo) bool
}

// ServeTimeout is how long a committed job waits for the query nodes to
// serve its segments before it reports Completed anyway.
const ServeTimeout = 10 * time.Second

// Collections resolves collections (the root coordinator).
type Collections interface {
	CollectionByID(id int64) (*catalog.Collection, error)
}

// Allocator hands out TSO-shaped IDs or timestamps.
type Allocator interface {
	Allocate(ctx context.Context, n uint32) (uint64, error)
}

// KV is the part of the meta store jobs are kept in.
type KV interface {
	Scan(ctx context.Context, prefix string) ([]metastore.KeyValue, error)
	Txn(ctx context.Context, ops ...metastore.Op) error
}

// Deps are the components a Manager works with.
type Deps struct {
	KV    KV
	IDs   Allocator
	TSO   Allocator
	Files Files
	// Lister lists the binlogs of a backup import (the object store).
	Lister      Lister
	Rows        Rows
	Writer      SegmentWriter
	Committer   Committer
	Collections Collections
	// Serving, when set, tells whether the query nodes serve committed
	// segments: a job reports Completed once they do (or after
	// ServeTimeout), so that a read after it sees the rows.
	Serving Serving
	// Remover and RootPath let a failed job delete the segment files it wrote.
	Remover  Remover
	RootPath string
	Logger   *slog.Logger
}

// Manager runs import jobs, one at a time, in submission order.
type Manager struct {
	cfg  Config
	deps Deps

	mu    sync.Mutex
	jobs  map[int64]*Job
	queue []int64
	kick  chan struct{}
}

// New loads the jobs recorded in the meta store. Jobs that were Pending or
// Importing when the server stopped run again from the start (what an
// interrupted run wrote was never committed; garbage collection removes it).
func New(ctx context.Context, cfg Config, deps Deps) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Manager{cfg: cfg, deps: deps, jobs: map[int64]*Job{}, kick: make(chan struct{}, 1)}
	kvs, err := deps.KV.Scan(ctx, JobPrefix)
	if err != nil {
		return nil, fmt.Errorf("importer: load jobs: %w", err)
	}
	for _, kv := range kvs {
		var j Job
		if err := catalog.Unmarshal(kv.Value, &j); err != nil {
			return nil, fmt.Errorf("importer: decode %s: %w", kv.Key, err)
		}
		if j.State == StatePending || j.State == StateImporting {
			j.State, j.Progress, j.TotalRows, j.ImportedRows, j.Segments = StatePending, 0, 0, 0, nil
			for i := range j.Tasks {
				j.Tasks[i] = Task{Files: j.Tasks[i].Files, State: StatePending}
			}
			m.queue = append(m.queue, j.ID)
		}
		m.jobs[j.ID] = &j
	}
	sort.Slice(m.queue, func(a, b int) bool { return m.queue[a] < m.queue[b] })
	return m, nil
}

// Submit records a new Pending job and queues it.
func (m *Manager) Submit(ctx context.Context, req Request) (int64, error) {
	if len(req.Files) == 0 {
		return 0, errcode.InvalidParam("import request is empty")
	}
	if len(req.Files) > m.cfg.MaxFiles {
		return 0, Failed("The max number of import files should not exceed %d, but got %d", m.cfg.MaxFiles, len(req.Files))
	}
	backup := isBackup(req.Options) || isL0Import(req.Options)
	for _, f := range req.Files {
		if backup {
			if err := checkBackupFiles(f); err != nil {
				return 0, err
			}
		} else if _, err := TypeOf(f); err != nil {
			return 0, err
		}
		for _, p := range f {
			if p == "" && backup {
				continue // an empty delta-log prefix (checkBackupFiles)
			}
			if err := m.checkPath(strings.TrimSuffix(p, "/")); err != nil {
				return 0, err
			}
		}
	}
	if backup {
		if m.deps.Lister == nil {
			return 0, Failed("importing backup binlogs is not configured on this server")
		}
		if _, _, err := timeRange(req.Options); err != nil {
			return 0, Failed("%v", err)
		}
	}
	timeout, err := parseTimeout(req.Options["timeout"])
	if err != nil {
		return 0, Failed("%v", err)
	}
	id, err := m.deps.IDs.Allocate(ctx, 1)
	if err != nil {
		return 0, err
	}
	j := &Job{
		ID: int64(id), DB: req.DB, CollectionID: req.CollectionID, CollectionName: req.CollectionName,
		Partition: req.Partition, Options: req.Options, State: StatePending, Timeout: timeout,
		CreateTime: time.Now().Format(timeLayout),
	}
	for _, f := range req.Files {
		j.Tasks = append(j.Tasks, Task{Files: f, State: StatePending})
	}
	if err := m.save(ctx, j); err != nil {
		return 0, err
	}
	m.mu.Lock()
	m.jobs[j.ID] = j
	m.queue = append(m.queue, j.ID)
	m.mu.Unlock()
	m.deps.Logger.Info("import job created", "job", j.ID, "collection", j.CollectionName, "tasks", len(j.Tasks))
	select {
	case m.kick <- struct{}{}:
	default:
	}
	return j.ID, nil
}

func (m *Manager) checkPath(p string) error {
	if filepath.IsAbs(p) {
		if !m.cfg.AllowLocalPaths {
			return Failed("the import file %s is an absolute path; paths are object-store keys (set import.allowLocalPaths to read the server's file system)", p)
		}
		return nil
	}
	if err := objstore.ValidateKey(p); err != nil {
		return Failed("the import file path %q is not valid: %v", p, err)
	}
	return nil
}

// Job returns a copy of job id's record (false when there is none). The
// error is always nil in process; the signature is the proxy's
// (proxy.Importer), which a remote importer implements too.
func (m *Manager) Job(_ context.Context, id int64) (Job, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, ok := m.jobs[id]
	if !ok {
		return Job{}, false, nil
	}
	return cloneJob(j), true, nil
}

// Jobs returns the jobs of a database (every database when db is "") and,
// when collectionID is not 0, of one collection, oldest first. The error
// is always nil in process (proxy.Importer's signature).
func (m *Manager) Jobs(_ context.Context, db string, collectionID int64) ([]Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Job
	for _, j := range m.jobs {
		if (db == "" || j.DB == db) && (collectionID == 0 || j.CollectionID == collectionID) {
			out = append(out, cloneJob(j))
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out, nil
}

func cloneJob(j *Job) Job {
	c := *j
	c.Tasks = append([]Task(nil), j.Tasks...)
	c.Segments = append([]int64(nil), j.Segments...)
	return c
}

// save persists the job's record.
func (m *Manager) save(ctx context.Context, j *Job) error {
	op, err := m.putOp(j)
	if err != nil {
		return err
	}
	if err := m.deps.KV.Txn(ctx, op); err != nil {
		return fmt.Errorf("importer: save job %d: %w", j.ID, err)
	}
	return nil
}

// putOp is the meta-store write of the job's current record (under m.mu
// when the job is shared).
func (m *Manager) putOp(j *Job) (metastore.Op, error) {
	m.mu.Lock()
	c := cloneJob(j)
	m.mu.Unlock()
	b, err := catalog.Marshal(&c)
	if err != nil {
		return metastore.Op{}, err
	}
	return metastore.Put(JobKey(j.ID), b), nil
}

// Run executes queued jobs until ctx ends, and forgets finished jobs past
// the retention.
func (m *Manager) Run(ctx context.Context) error {
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for {
		m.expire(ctx, time.Now())
		m.mu.Lock()
		var j *Job
		if len(m.queue) > 0 {
			j = m.jobs[m.queue[0]]
			m.queue = m.queue[1:]
		}
		m.mu.Unlock()
		if j == nil {
			select {
			case <-ctx.Done():
				return nil
			case <-m.kick:
			case <-tick.C:
			}
			continue
		}
		m.execute(ctx, j)
		if ctx.Err() != nil {
			return nil
		}
	}
}

// expire deletes the records of jobs that finished more than the retention ago.
func (m *Manager) expire(ctx context.Context, now time.Time) {
	m.mu.Lock()
	var old []int64
	for id, j := range m.jobs {
		if j.State != StateCompleted && j.State != StateFailed {
			continue
		}
		if t, err := time.Parse(timeLayout, j.CompleteTime); err == nil && now.Sub(t) > m.cfg.Retention {
			old = append(old, id)
		}
	}
	m.mu.Unlock()
	for _, id := range old {
		if err := m.deps.KV.Txn(ctx, metastore.Delete(JobKey(id))); err != nil {
			m.deps.Logger.Warn("removing an expired import job failed; will retry", "job", id, "err", err)
			continue
		}
		m.mu.Lock()
		delete(m.jobs, id)
		m.mu.Unlock()
	}
}

// update changes a shared job under m.mu.
func (m *Manager) update(fn func()) {
	m.mu.Lock()
	fn()
	m.mu.Unlock()
}

// execute runs one job to Completed or Failed. A job cut short by shutdown
// stays Importing in the meta store and runs again after a restart.
func (m *Manager) execute(ctx context.Context, j *Job) {
	start := time.Now()
	jctx := ctx
	if j.Timeout > 0 {
		var cancel context.CancelFunc
		jctx, cancel = context.WithTimeout(ctx, j.Timeout)
		defer cancel()
	}
	segs, err := m.run(jctx, j)
	if ctx.Err() != nil {
		m.discard(context.WithoutCancel(ctx), segs)
		return
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && j.Timeout > 0 {
			err = fmt.Errorf("the import job timed out after %s", j.Timeout)
		}
		m.discard(ctx, segs)
		m.update(func() {
			j.State, j.Reason, j.CompleteTime = StateFailed, err.Error(), time.Now().Format(timeLayout)
			j.Segments = nil
		})
		if serr := m.save(ctx, j); serr != nil {
			m.deps.Logger.Warn("import job failed, and recording it failed", "job", j.ID, "err", serr)
		}
		m.deps.Logger.Warn("import job failed; nothing of it is visible", "job", j.ID, "collection", j.CollectionName,
			"reason", err.Error(), "took", time.Since(start).String())
		return
	}
	m.deps.Logger.Info("import job completed", "job", j.ID, "collection", j.CollectionName, "rows", j.ImportedRows,
		"segments", len(segs), "took", time.Since(start).String())
}

// discard deletes the files of segments written for a job that did not commit.
func (m *Manager) discard(ctx context.Context, segs []catalog.SegmentInfo) {
	for _, s := range segs {
		if err := m.discardSegment(ctx, s); err != nil {
			m.deps.Logger.Warn("removing an uncommitted import segment failed; garbage collection removes it later",
				"segment", s.ID, "err", err)
		}
	}
}

// discardSegment deletes the files of one uncommitted segment.
func (m *Manager) discardSegment(ctx context.Context, s catalog.SegmentInfo) error {
	var errs []error
	for f, logs := range s.Binlogs {
		for _, l := range logs {
			errs = append(errs, m.deps.Remover.Delete(ctx, storage.InsertLogKey(m.deps.RootPath, s.CollectionID, s.PartitionID, s.ID, f, l.LogID)))
		}
	}
	for f, logs := range s.Statslogs {
		for _, l := range logs {
			errs = append(errs, m.deps.Remover.Delete(ctx, storage.StatsLogKey(m.deps.RootPath, s.CollectionID, s.PartitionID, s.ID, f, l.LogID)))
		}
	}
	for _, l := range s.Deltalogs {
		errs = append(errs, m.deps.Remover.Delete(ctx, storage.DeltaLogKey(m.deps.RootPath, s.CollectionID, s.PartitionID, s.ID, l.LogID)))
	}
	return errors.Join(errs...)
}

// accKey is one (partition, vchannel) pair of the job's rows.
type accKey struct {
	partition int64
	vchannel  string
}

// acc accumulates one partition and vchannel's rows until a segment is full.
type acc struct {
	cols  map[int64]column.Column
	rows  int
	bytes int64
}

// run reads every task, writes segments and commits them with the job's
// Completed record. It returns the segments written (for discarding on
// failure).
func (m *Manager) run(ctx context.Context, j *Job) ([]catalog.SegmentInfo, error) {
	coll, err := m.deps.Collections.CollectionByID(j.CollectionID)
	if err != nil {
		return nil, err
	}
	// A marker below every ID the job allocates from here on: garbage
	// collection keeps files above it while the job runs.
	marker, err := m.deps.IDs.Allocate(ctx, 1)
	if err != nil {
		return nil, err
	}
	m.deps.Committer.BeginImport(j.ID, int64(marker))
	defer m.deps.Committer.EndImport(j.ID)
	ts, err := m.deps.TSO.Allocate(ctx, 1)
	if err != nil {
		return nil, err
	}
	m.update(func() { j.State, j.Progress = StateImporting, 1 })
	if err := m.save(ctx, j); err != nil {
		return nil, err
	}
	var segs []catalog.SegmentInfo
	accs := map[accKey]*acc{}
	var keys []accKey
	flush := func(k accKey) error {
		a := accs[k]
		if a == nil || a.rows == 0 {
			return nil
		}
		info, err := m.deps.Writer.WriteImportSegment(ctx, coll, k.partition, k.vchannel, a.cols)
		if err != nil {
			return err
		}
		info.ImportJob = j.ID
		segs = append(segs, info)
		delete(accs, k)
		return nil
	}
	for ti := range j.Tasks {
		var err error
		if isL0Import(j.Options) {
			var l0 []catalog.SegmentInfo
			l0, err = m.runL0Task(ctx, j, ti, coll)
			for _, s := range l0 {
				s.ImportJob = j.ID
				segs = append(segs, s)
			}
		} else {
			err = m.runTask(ctx, j, ti, coll, ts, accs, &keys, flush)
		}
		if err != nil {
			m.update(func() {
				t := &j.Tasks[ti]
				t.State, t.Reason = StateFailed, err.Error()
			})
			return segs, fmt.Errorf("file %s: %w", j.Tasks[ti].FileName(), err)
		}
	}
	for _, k := range keys {
		if err := flush(k); err != nil {
			return segs, err
		}
	}
	if _, err := m.deps.Collections.CollectionByID(j.CollectionID); err != nil {
		return segs, fmt.Errorf("the collection was dropped during the import: %w", err)
	}
	now := time.Now().Format(timeLayout)
	ids := make([]int64, len(segs))
	for i, s := range segs {
		ids[i] = s.ID
	}
	var done Job
	m.update(func() {
		done = cloneJob(j)
	})
	done.State, done.Progress, done.CompleteTime, done.Segments = StateCompleted, 100, now, ids
	for i := range done.Tasks {
		done.Tasks[i].State, done.Tasks[i].Progress, done.Tasks[i].CompleteTime = StateCompleted, 100, now
	}
	b, err := catalog.Marshal(&done)
	if err != nil {
		return segs, err
	}
	if err := m.deps.Committer.CommitImport(ctx, segs, metastore.Put(JobKey(j.ID), b)); err != nil {
		return segs, err
	}
	m.update(func() { j.Progress, j.Segments = 99, ids })
	m.waitServed(ctx, coll.ID, segs)
	m.update(func() { *j = done })
	return nil, nil
}

// waitServed waits until the query nodes serve committed segments.
func (m *Manager) waitServed(ctx context.Context, collectionID int64, segs []catalog.SegmentInfo) {
	if m.deps.Serving == nil || len(segs) == 0 {
		return
	}
	deadline := time.Now().Add(ServeTimeout)
	for !m.deps.Serving.Serves(collectionID, segs) && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// runTask reads one task's files batch by batch, routing each batch's rows
// into the accumulators and writing a segment whenever one is full.
func (m *Manager) runTask(ctx context.Context, j *Job, ti int, coll *catalog.Collection, ts uint64,
	accs map[accKey]*acc, keys *[]accKey, flush func(accKey) error,
) error {
	if isBackup(j.Options) {
		return m.runBackupTask(ctx, j, ti, coll, ts, accs, keys, flush)
	}
	src, size, err := openSource(ctx, coll.Schema, j.Tasks[ti].Files, m.deps.Files)
	if err != nil {
		return err
	}
	if r, ok := src.(interface{ release() }); ok {
		defer r.release()
	}
	total := src.numRows()
	m.update(func() {
		t := &j.Tasks[ti]
		t.State, t.FileSize, t.TotalRows = StateImporting, size, int64(total)
		j.TotalRows += int64(total)
	})
	for lo := 0; lo < total; lo += m.cfg.BatchRows {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi := min(lo+m.cfg.BatchRows, total)
		b, err := src.read(lo, hi)
		if err != nil {
			return err
		}
		inserts, err := m.deps.Rows.ImportRows(ctx, coll, j.Partition, b.fieldData(), b.rows)
		if err != nil {
			return fmt.Errorf("rows %d to %d: %w", lo, hi-1, err)
		}
		if err := m.accumulate(coll, inserts, ts, accs, keys, flush); err != nil {
			return fmt.Errorf("rows %d to %d: %w", lo, hi-1, err)
		}
		m.update(func() {
			t := &j.Tasks[ti]
			t.ImportedRows = int64(hi)
			t.Progress = int64(hi) * 100 / int64(max(total, 1))
			j.ImportedRows += int64(hi - lo)
			j.Progress = tasksProgress(j.Tasks)
		})
	}
	m.update(func() {
		t := &j.Tasks[ti]
		t.State, t.Progress = StateImporting, 100
	})
	return nil
}

// tasksProgress is a running job's progress from its tasks': 1 to 99.
func tasksProgress(tasks []Task) int64 {
	var sum int64
	for _, t := range tasks {
		sum += t.Progress
	}
	return 1 + 98*sum/(100*int64(len(tasks)))
}

// accumulate adds routed inserts to their partition and vchannel's
// accumulator, writing a segment whenever one is full.
func (m *Manager) accumulate(coll *catalog.Collection, inserts []*msgpb.InsertRequest, ts uint64,
	accs map[accKey]*acc, keys *[]accKey, flush func(accKey) error,
) error {
	for _, in := range inserts {
		k := accKey{in.GetPartitionID(), in.GetShardName()}
		a, full, err := m.add(coll, accs[k], in, ts)
		if err != nil {
			return err
		}
		if accs[k] == nil {
			*keys = append(*keys, k)
		}
		accs[k] = a
		if full {
			if err := flush(k); err != nil {
				return err
			}
		}
	}
	return nil
}

// runBackupTask reads one segment of a backup (Milvus's backup import: its
// insert-log prefix, then delta-log prefixes), sync by sync, keeping the
// rows in the job's time range that no delete in range removes, and routes
// them with their keys.
func (m *Manager) runBackupTask(ctx context.Context, j *Job, ti int, coll *catalog.Collection, ts uint64,
	accs map[accKey]*acc, keys *[]accKey, flush func(accKey) error,
) error {
	start, end, err := timeRange(j.Options)
	if err != nil {
		return err
	}
	groups, err := backupGroups(ctx, j.Tasks[ti].Files, m.deps.Lister)
	if err != nil {
		return err
	}
	m.update(func() { j.Tasks[ti].State = StateImporting })
	for gi, g := range groups {
		if err := m.importBackupSegment(ctx, j, ti, coll, ts, g, gi, len(groups), start, end, accs, keys, flush); err != nil {
			return err
		}
	}
	return nil
}

// runL0Task runs one task of an L0 import: the deletes its delta logs hold
// in the job's time range, each key's latest, become one L0 segment per
// vchannel with the deletes' own timestamps (as Milvus's L0 import keeps
// them), committed with the job: they remove the rows older than them,
// those of a backup import included (it keeps its rows' timestamps).
func (m *Manager) runL0Task(ctx context.Context, j *Job, ti int, coll *catalog.Collection) ([]catalog.SegmentInfo, error) {
	start, end, err := timeRange(j.Options)
	if err != nil {
		return nil, err
	}
	m.update(func() { j.Tasks[ti].State = StateImporting })
	pks, tss, size, err := readL0Deletes(ctx, coll.Schema, j.Tasks[ti].Files, m.deps.Files, m.deps.Lister, start, end)
	if err != nil {
		return nil, err
	}
	var segs []catalog.SegmentInfo
	if pks.Len() > 0 {
		routed := m.deps.Rows.RouteKeys(coll, pks)
		for _, v := range slices.Sorted(maps.Keys(routed)) {
			idx := routed[v]
			t := make([]uint64, len(idx))
			for i, x := range idx {
				t[i] = tss[x]
			}
			info, err := m.deps.Writer.WriteImportDeletes(ctx, coll, v, pks.Take(idx), t)
			if err != nil {
				return segs, fmt.Errorf("deletes: %w", err)
			}
			segs = append(segs, info)
		}
	}
	m.update(func() {
		t := &j.Tasks[ti]
		n := int64(pks.Len())
		t.FileSize, t.TotalRows, t.ImportedRows, t.Progress = size, n, n, 100
		j.TotalRows += n
		j.ImportedRows += n
		j.Progress = tasksProgress(j.Tasks)
	})
	return segs, nil
}

// importBackupSegment imports one segment of a backup task, the gi-th of
// the task's n.
func (m *Manager) importBackupSegment(ctx context.Context, j *Job, ti int, coll *catalog.Collection, ts uint64,
	paths []string, gi, nseg int, start, end uint64, accs map[accKey]*acc, keys *[]accKey, flush func(accKey) error,
) error {
	seg, err := openBackupSegment(ctx, coll.Schema, paths, m.deps.Files, m.deps.Lister, start, end)
	if err != nil {
		return err
	}
	var base int64
	m.update(func() { base = j.Tasks[ti].FileSize })
	for k := 0; k < seg.nfiles; k++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		cols, kept, read, err := seg.read(ctx, k)
		if err != nil {
			return err
		}
		if kept > 0 {
			inserts, err := m.deps.Rows.ImportColumns(ctx, coll, j.Partition, cols, kept)
			if err != nil {
				return fmt.Errorf("binlog %d: %w", k, err)
			}
			if err := m.accumulate(coll, inserts, ts, accs, keys, flush); err != nil {
				return fmt.Errorf("binlog %d: %w", k, err)
			}
		}
		m.update(func() {
			t := &j.Tasks[ti]
			t.FileSize, t.TotalRows, t.ImportedRows = base+seg.size, t.TotalRows+int64(read), t.ImportedRows+int64(kept)
			t.Progress = (int64(gi)*100 + int64(k+1)*100/int64(seg.nfiles)) / int64(nseg)
			j.TotalRows += int64(read)
			j.ImportedRows += int64(kept)
			j.Progress = tasksProgress(j.Tasks)
		})
	}
	return nil
}

// add appends one routed insert's rows (with their row IDs and the job's
// timestamp as fields 0 and 1) to a, and says whether a is full.
func (m *Manager) add(coll *catalog.Collection, a *acc, in *msgpb.InsertRequest, ts uint64) (*acc, bool, error) {
	n := int(in.GetNumRows())
	user, err := column.InsertColumns(coll.Schema, in.GetFieldsData(), n)
	if err != nil {
		return nil, false, errcode.Invalid("%v", err)
	}
	tss := make([]int64, n)
	for i := range tss {
		tss[i] = int64(ts)
	}
	if own := in.GetTimestamps(); len(own) == n {
		// A backup import's rows keep their binlogs' timestamps.
		for i, t := range own {
			tss[i] = int64(t)
		}
	}
	user[0] = &column.Ints{T: schemapb.DataType_Int64, Data: in.GetRowIDs()}
	user[1] = &column.Ints{T: schemapb.DataType_Int64, Data: tss}
	if a == nil {
		a = &acc{cols: map[int64]column.Column{}}
	}
	for _, f := range coll.Schema.GetFields() {
		c := user[f.GetFieldID()]
		if c == nil || c.Len() != n {
			return nil, false, fmt.Errorf("field %q does not have the batch's %d rows", f.GetName(), n)
		}
		a.bytes += int64(c.MemorySize())
		if dst, ok := a.cols[f.GetFieldID()]; ok {
			column.AppendAll(dst, c)
		} else {
			a.cols[f.GetFieldID()] = c
		}
	}
	a.rows += n
	return a, a.bytes >= m.cfg.SegmentBytes, nil
}

// StoreFiles reads import files from object storage (paths are keys from
// the store's root, the bucket for S3) or, when allowed, absolute local paths.
type StoreFiles struct {
	Objects interface {
		Get(ctx context.Context, key string) ([]byte, error)
		List(ctx context.Context, prefix string) ([]objstore.ObjectInfo, error)
	}
	AllowLocal bool
}

// ListFiles implements Lister: the object keys under prefix, sorted.
func (s StoreFiles) ListFiles(ctx context.Context, prefix string) ([]string, error) {
	infos, err := s.Objects.List(ctx, strings.TrimPrefix(prefix, "/"))
	if err != nil {
		return nil, err
	}
	out := make([]string, len(infos))
	for i, o := range infos {
		out[i] = o.Key
	}
	return out, nil
}

// ReadFile implements Files.
func (s StoreFiles) ReadFile(ctx context.Context, p string) ([]byte, error) {
	if filepath.IsAbs(p) {
		if !s.AllowLocal {
			return nil, fmt.Errorf("absolute paths are not allowed: %s", p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, errors.Unwrap(err))
		}
		return b, nil
	}
	b, err := s.Objects.Get(ctx, strings.TrimPrefix(p, "/"))
	if errors.Is(err, objstore.ErrNotFound) {
		return nil, fmt.Errorf("the file %s does not exist in the object store", p)
	}
	return b, err
}
