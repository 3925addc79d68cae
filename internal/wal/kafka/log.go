package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-db/strata/internal/wal"
)

// ErrRecordTooLarge is returned (in an AppendResult) for a record larger than
// Config.MaxRecordBytes.
var ErrRecordTooLarge = errors.New("wal/kafka: record too large")

// ErrEmptyRecord is returned (in an AppendResult) for an empty record.
var ErrEmptyRecord = errors.New("wal/kafka: empty record")

// Log is a wal.Log on Kafka: one single-partition topic per pchannel. It is
// safe for concurrent use.
type Log struct {
	cfg    Config
	logger *slog.Logger
	cl     *kgo.Client // producer and admin connection
	adm    *kadm.Client

	// closeMu is held shared by AppendAsync and Read while they enqueue or
	// register, and exclusively by Close to flip closed.
	closeMu sync.RWMutex
	closed  bool
	ctx     context.Context // canceled by Close, for topic creation
	cancel  context.CancelFunc

	mu      sync.Mutex
	chans   map[string]*channel
	readers map[*reader]struct{}
}

// channel is the per-pchannel state.
type channel struct {
	// mu serializes AppendAsync calls on the channel so that their records
	// reach the producer's partition buffer contiguously and in call order.
	mu      sync.Mutex
	topic   string
	created atomic.Bool // the topic is known to exist
	// truncated is the highest log start offset this Log has set, so that
	// repeated Truncate calls at the same checkpoint cost no request.
	truncated atomic.Int64
}

// Open connects to the brokers of cfg (after Defaults and Validate), failing
// if none answers within RequestTimeout. It does not create topics: each is
// created when its pchannel is first used.
func Open(cfg Config, logger *slog.Logger) (*Log, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// The producer is idempotent (franz-go's default, which requires
	// acks=all): retries never duplicate or reorder a partition's records.
	cl, err := kgo.NewClient(append(clientOpts(cfg),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchMaxBytes(cfg.MaxRecordBytes+batchOverhead),
		kgo.ProducerLinger(cfg.Linger),
		kgo.RecordDeliveryTimeout(cfg.DeliveryTimeout),
		// Let DeliveryTimeout fail records whose request is in flight too:
		// an append must end, and a failed append may still be durable
		// (wal.Writer.Append says so), so a retry may duplicate it.
		kgo.AllowIdempotentProduceCancellation(),
	)...)
	if err != nil {
		return nil, fmt.Errorf("wal/kafka: client: %w", err)
	}
	pctx, pcancel := context.WithTimeout(context.Background(), cfg.RequestTimeout)
	err = cl.Ping(pctx)
	pcancel()
	if err != nil {
		cl.Close()
		return nil, fmt.Errorf("wal/kafka: brokers %v unreachable: %w", cfg.Brokers, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	adm := kadm.NewClient(cl)
	adm.SetTimeoutMillis(int32(cfg.RequestTimeout.Milliseconds()))
	return &Log{
		cfg: cfg, logger: logger, cl: cl, adm: adm,
		ctx: ctx, cancel: cancel, chans: make(map[string]*channel), readers: make(map[*reader]struct{}),
	}, nil
}

// clientOpts are the options shared by the producer and the readers' clients.
func clientOpts(cfg Config) []kgo.Opt {
	return []kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ClientID(cfg.ClientID),
	}
}

// topicOf returns the topic name of pchannel, or an error naming it.
func (l *Log) topicOf(pchannel string) (string, error) {
	topic := l.cfg.TopicPrefix + pchannel
	if err := validTopic(topic); err != nil {
		return "", fmt.Errorf("wal/kafka: pchannel %q: %w", pchannel, err)
	}
	return topic, nil
}

func (l *Log) channel(pchannel string) (*channel, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.chans[pchannel]; ok {
		return c, nil
	}
	topic, err := l.topicOf(pchannel)
	if err != nil {
		return nil, err
	}
	c := &channel{topic: topic}
	l.chans[pchannel] = c
	return c, nil
}

// ensureTopic creates c's topic (one partition, no time or size retention,
// max.message.bytes fitting MaxRecordBytes) unless it exists.
func (l *Log) ensureTopic(ctx context.Context, c *channel) error {
	if c.created.Load() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, l.cfg.RequestTimeout)
	defer cancel()
	configs := map[string]*string{
		"max.message.bytes": kadm.StringPtr(strconv.Itoa(int(l.cfg.MaxRecordBytes) + batchOverhead)),
		"retention.ms":      kadm.StringPtr("-1"),
		"retention.bytes":   kadm.StringPtr("-1"),
		"cleanup.policy":    kadm.StringPtr("delete"),
	}
	_, err := l.adm.CreateTopic(ctx, 1, l.cfg.ReplicationFactor, configs, c.topic)
	switch {
	case errors.Is(err, kerr.TopicAlreadyExists):
		// Made by another server or by hand: it must have one partition,
		// or records would be spread over partitions this Log never reads.
		// A topic another caller has just created may list no partitions
		// until its metadata settles: wait for them rather than refuse.
		for {
			td, err := l.adm.ListTopics(ctx, c.topic)
			if err != nil {
				return fmt.Errorf("wal/kafka: describe topic %q: %w", c.topic, err)
			}
			n := len(td[c.topic].Partitions)
			if n == 1 {
				break
			}
			if n > 1 || ctx.Err() != nil {
				return fmt.Errorf("wal/kafka: topic %q has %d partitions; a WAL topic must have exactly 1", c.topic, n)
			}
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	case err != nil:
		return fmt.Errorf("wal/kafka: create topic %q: %w", c.topic, err)
	}
	c.created.Store(true)
	return nil
}

// AppendAsync implements wal.Log. Records are produced to partition 0 of the
// pchannel's topic, in call order (calls on one pchannel are serialized), by
// an idempotent producer with acks=all; the result arrives when every record
// of the call is acknowledged, or with the first failure.
func (l *Log) AppendAsync(pchannel string, records [][]byte) <-chan wal.AppendResult {
	out := make(chan wal.AppendResult, 1)
	fail := func(err error) <-chan wal.AppendResult {
		out <- wal.AppendResult{Err: err}
		return out
	}
	if len(records) == 0 {
		return fail(fmt.Errorf("wal/kafka: %s: no records", pchannel))
	}
	for i, r := range records {
		switch {
		case len(r) == 0:
			return fail(fmt.Errorf("%w: %s record %d", ErrEmptyRecord, pchannel, i))
		case int64(len(r)) > int64(l.cfg.MaxRecordBytes):
			return fail(fmt.Errorf("%w: %s record %d has %d bytes, maxRecordBytes is %d",
				ErrRecordTooLarge, pchannel, i, len(r), l.cfg.MaxRecordBytes))
		}
	}
	l.closeMu.RLock()
	defer l.closeMu.RUnlock()
	if l.closed {
		return fail(wal.ErrClosed)
	}
	c, err := l.channel(pchannel)
	if err != nil {
		return fail(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := l.ensureTopic(l.ctx, c); err != nil {
		return fail(err)
	}
	call := &appendCall{out: out, first: -1}
	call.pending.Store(int64(len(records)))
	for i, data := range records {
		rec := &kgo.Record{Topic: c.topic, Partition: 0, Value: data}
		// The producer's context is Background: a canceled context would fail
		// buffered records, and Close flushes instead.
		l.cl.Produce(context.Background(), rec, func(r *kgo.Record, err error) { call.done(i, r, err) })
	}
	return out
}

// appendCall collects the per-record acknowledgements of one AppendAsync call.
type appendCall struct {
	out     chan wal.AppendResult
	pending atomic.Int64
	mu      sync.Mutex
	first   int64
	err     error
}

func (a *appendCall) done(i int, r *kgo.Record, err error) {
	a.mu.Lock()
	if err != nil && a.err == nil {
		a.err = fmt.Errorf("wal/kafka: produce to %s: %w", r.Topic, err)
	}
	if i == 0 && err == nil {
		a.first = r.Offset
	}
	a.mu.Unlock()
	if a.pending.Add(-1) == 0 {
		a.mu.Lock()
		res := wal.AppendResult{Offset: a.first, Err: a.err}
		a.mu.Unlock()
		if errors.Is(res.Err, kgo.ErrClientClosed) {
			res.Err = fmt.Errorf("%w: %w", wal.ErrClosed, res.Err)
		}
		a.out <- res
	}
}

// End implements wal.Log: the partition's high watermark (every record below
// it is acknowledged by all in-sync replicas), 0 for a topic that does not exist.
func (l *Log) End(ctx context.Context, pchannel string) (int64, error) {
	if l.isClosed() {
		return 0, wal.ErrClosed
	}
	topic, err := l.topicOf(pchannel)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, l.cfg.RequestTimeout)
	defer cancel()
	return l.listOffset(ctx, topic, l.adm.ListEndOffsets)
}

// start returns the partition's log start offset (0 for a missing topic).
func (l *Log) start(ctx context.Context, topic string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, l.cfg.RequestTimeout)
	defer cancel()
	return l.listOffset(ctx, topic, l.adm.ListStartOffsets)
}

// listOffset lists one offset of the topic's partition. A retriable
// answer (the partition has no leader yet: a topic just created, or a
// broker that just restarted and is electing) is asked again with backoff
// until ctx ends, so that the first write to a new pchannel does not fail
// on the broker's election.
func (l *Log) listOffset(ctx context.Context, topic string,
	list func(context.Context, ...string) (kadm.ListedOffsets, error),
) (int64, error) {
	backoff := 20 * time.Millisecond
	for {
		off, err := listOffsetOnce(ctx, topic, list)
		if err == nil || !kerr.IsRetriable(err) {
			return off, err
		}
		select {
		case <-ctx.Done():
			return 0, err
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

func listOffsetOnce(ctx context.Context, topic string,
	list func(context.Context, ...string) (kadm.ListedOffsets, error),
) (int64, error) {
	lo, err := list(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("wal/kafka: list offsets of %q: %w", topic, err)
	}
	o, ok := lo.Lookup(topic, 0)
	if !ok {
		return 0, nil // the topic does not exist
	}
	if o.Err != nil {
		if errors.Is(o.Err, kerr.UnknownTopicOrPartition) {
			return 0, nil
		}
		return 0, fmt.Errorf("wal/kafka: list offsets of %q: %w", topic, o.Err)
	}
	return o.Offset, nil
}

// Truncate implements wal.Log with DeleteRecords: the partition's log start
// offset moves to before (at most the high watermark), and the broker drops
// the segments wholly below it.
func (l *Log) Truncate(ctx context.Context, pchannel string, before int64) error {
	if l.isClosed() {
		return wal.ErrClosed
	}
	c, err := l.channel(pchannel)
	if err != nil {
		return err
	}
	if before <= c.truncated.Load() {
		return nil
	}
	end, err := l.End(ctx, pchannel)
	if err != nil {
		return err
	}
	before = min(before, end)
	if before <= c.truncated.Load() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, l.cfg.RequestTimeout)
	defer cancel()
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: c.topic, Partition: 0, At: before, LeaderEpoch: -1})
	rs, err := l.adm.DeleteRecords(ctx, os)
	if err == nil {
		if r, ok := rs.Lookup(c.topic, 0); ok {
			err = r.Err
		}
	}
	if err != nil {
		return fmt.Errorf("wal/kafka: delete records of %q before %d: %w", c.topic, before, err)
	}
	for {
		cur := c.truncated.Load()
		if before <= cur || c.truncated.CompareAndSwap(cur, before) {
			return nil
		}
	}
}

func (l *Log) isClosed() bool {
	l.closeMu.RLock()
	defer l.closeMu.RUnlock()
	return l.closed
}

// Close implements wal.Log: it waits (up to CloseTimeout) for pending
// appends to be acknowledged, fails the rest, wakes blocked readers and
// disconnects. It is idempotent.
func (l *Log) Close() error {
	l.cancel() // topic creation in progress gives up, so the lock comes quickly
	l.closeMu.Lock()
	if l.closed {
		l.closeMu.Unlock()
		return nil
	}
	l.closed = true
	l.closeMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.CloseTimeout)
	defer cancel()
	var err error
	if ferr := l.cl.Flush(ctx); ferr != nil {
		err = fmt.Errorf("wal/kafka: close: pending appends: %w", ferr)
	}
	l.mu.Lock()
	readers := make([]*reader, 0, len(l.readers))
	for r := range l.readers {
		readers = append(readers, r)
	}
	l.mu.Unlock()
	for _, r := range readers {
		r.shutdown()
	}
	l.cl.Close()
	return err
}

// Ping asks a broker for the cluster's metadata: nil when one answers.
func (l *Log) Ping(ctx context.Context) error {
	if err := l.cl.Ping(ctx); err != nil {
		return fmt.Errorf("wal/kafka: ping %v: %w", l.cfg.Brokers, err)
	}
	return nil
}
