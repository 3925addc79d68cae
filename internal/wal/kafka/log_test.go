package kafka

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-db/strata/internal/wal"
)

func openLog(t *testing.T, cfg Config) *Log {
	t.Helper()
	if cfg.Brokers == nil {
		cfg.Brokers = startCluster(t)
	}
	l, err := Open(cfg, testLogger(t))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, l.Close()) })
	return l
}

func TestConfigValidate(t *testing.T) {
	ok := Config{Brokers: []string{"k:9092"}}.withDefaults()
	require.NoError(t, ok.Validate())
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"NoBrokers", func(c *Config) { c.Brokers = nil }, "brokers"},
		{"EmptyBroker", func(c *Config) { c.Brokers = []string{""} }, "brokers"},
		{"BadPrefix", func(c *Config) { c.TopicPrefix = "a/b" }, "topicPrefix"},
		{"ZeroReplication", func(c *Config) { c.ReplicationFactor = -2 }, "replicationFactor"},
		{"HugeRecord", func(c *Config) { c.MaxRecordBytes = 1 << 30 }, "maxRecordBytes"},
		{"NegativeLinger", func(c *Config) { c.Linger = -time.Second }, "linger"},
		{"ShortDelivery", func(c *Config) { c.DeliveryTimeout = time.Millisecond }, "deliveryTimeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			err := c.Validate()
			require.ErrorIs(t, err, ErrInvalidConfig)
			require.ErrorContains(t, err, tc.want)
			_, err = Open(c, nil)
			require.ErrorIs(t, err, ErrInvalidConfig)
		})
	}
}

func TestAppendRejects(t *testing.T) {
	l := openLog(t, Config{MaxRecordBytes: 1 << 10})
	res := <-l.AppendAsync("ch", [][]byte{[]byte("ok"), make([]byte, 1<<10+1)})
	require.ErrorIs(t, res.Err, ErrRecordTooLarge)
	require.ErrorContains(t, res.Err, "record 1")
	res = <-l.AppendAsync("ch", [][]byte{nil})
	require.ErrorIs(t, res.Err, ErrEmptyRecord)
	res = <-l.AppendAsync("bad name", [][]byte{[]byte("x")})
	require.ErrorContains(t, res.Err, `pchannel "bad name"`)
	_, err := l.Read(context.Background(), "bad name", 0)
	require.ErrorContains(t, err, "only [a-zA-Z0-9._-]")
	_, err = l.Read(context.Background(), "ch", -1)
	require.ErrorContains(t, err, "negative offset")
	// Nothing of the rejected calls was written.
	end, err := l.End(context.Background(), "ch")
	require.NoError(t, err)
	require.Zero(t, end)
	// A record of exactly MaxRecordBytes fits.
	res = <-l.AppendAsync("ch", [][]byte{make([]byte, 1<<10)})
	require.NoError(t, res.Err)
}

// TestTopicLayout pins what doc.go promises about created topics.
func TestTopicLayout(t *testing.T) {
	brokers := startCluster(t)
	l := openLog(t, Config{Brokers: brokers, TopicPrefix: "strata."})
	require.NoError(t, (<-l.AppendAsync(wal.PChannelName("", 3), [][]byte{[]byte("x")})).Err)

	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	require.NoError(t, err)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	topic := "strata.by-dev-rootcoord-dml_3"
	td, err := adm.ListTopics(ctx, topic)
	require.NoError(t, err)
	require.True(t, td.Has(topic))
	require.Len(t, td[topic].Partitions, 1)
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	require.NoError(t, err)
	rc, err := rcs.On(topic, nil)
	require.NoError(t, err)
	got := map[string]string{}
	for _, c := range rc.Configs {
		got[c.Key] = c.MaybeValue()
	}
	require.Equal(t, "-1", got["retention.ms"])
	require.Equal(t, "-1", got["retention.bytes"])
	require.Equal(t, "delete", got["cleanup.policy"])
	require.Equal(t, fmt.Sprint(DefaultMaxRecordBytes+batchOverhead), got["max.message.bytes"])
}

// TestExistingTopic checks that a topic made elsewhere is used when it has one
// partition and refused, naming it, when it has more.
func TestExistingTopic(t *testing.T) {
	brokers := startCluster(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	require.NoError(t, err)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	_, err = adm.CreateTopic(ctx, 1, -1, nil, "one")
	require.NoError(t, err)
	_, err = adm.CreateTopic(ctx, 3, -1, nil, "three")
	require.NoError(t, err)

	l := openLog(t, Config{Brokers: brokers})
	res := <-l.AppendAsync("one", [][]byte{[]byte("x")})
	require.NoError(t, res.Err)
	require.Zero(t, res.Offset)
	res = <-l.AppendAsync("three", [][]byte{[]byte("x")})
	require.ErrorContains(t, res.Err, `topic "three" has 3 partitions; a WAL topic must have exactly 1`)
	_, err = l.Read(ctx, "three", 0)
	require.ErrorContains(t, err, "has 3 partitions")
}

// counterClock is a wal.Clock over a counter (strictly increasing).
type counterClock struct{ n atomic.Uint64 }

func (c *counterClock) Allocate(_ context.Context, n uint32) (uint64, error) {
	return c.n.Add(uint64(n)) - uint64(n) + 1, nil
}

// TestWriterOrder checks that wal.Writer's guarantee holds on Kafka: on every
// pchannel timestamps never decrease in offset order, and a batch over
// several pchannels carries one timestamp everywhere.
func TestWriterOrder(t *testing.T) {
	l := openLog(t, Config{})
	w := wal.NewWriter(l, &counterClock{}, wal.WriterConfig{}, nil)
	pchans := []string{wal.PChannelName("", 0), wal.PChannelName("", 1)}
	const workers, per = 8, 25
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			for i := range per {
				batch := map[string][]wal.Message{}
				for k, p := range pchans {
					if (g+i+k)%3 != 0 { // some batches span both pchannels
						vch := wal.VChannelName(p, 7, 0)
						batch[p] = []wal.Message{
							{Type: wal.TypeDelete, VChannel: vch, Payload: fmt.Appendf(nil, "%d-%d", g, i)},
							{Type: wal.TypeInsert, VChannel: vch, Payload: fmt.Appendf(nil, "%d-%d", g, i)},
						}
					}
				}
				if _, err := w.Append(context.Background(), batch); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	stamps := map[string]uint64{} // payload -> timestamp
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, p := range pchans {
		end, err := l.End(ctx, p)
		require.NoError(t, err)
		s, err := wal.OpenScanner(ctx, l, p, 0)
		require.NoError(t, err)
		var last uint64
		for {
			e, err := s.Next(ctx)
			require.NoError(t, err)
			require.GreaterOrEqual(t, e.Message.TimeTick, last, "%s offset %d", p, e.Position.Offset)
			last = e.Message.TimeTick
			if ts, ok := stamps[string(e.Message.Payload)]; ok {
				require.Equal(t, ts, e.Message.TimeTick, "one batch, one timestamp")
			}
			stamps[string(e.Message.Payload)] = e.Message.TimeTick
			if e.Message.Type == wal.TypeDelete {
				require.True(t, e.More, "an upsert's delete and insert share one record")
			}
			if !e.More && e.Position.Offset == end-1 {
				break
			}
		}
		require.NoError(t, s.Close())
	}
	require.Len(t, stamps, workers*per)
}

// TestCloseFlushes checks that Close waits for pending appends (any it fails report
// wal.ErrClosed) and that what was acknowledged survives in a new Log.
func TestCloseFlushes(t *testing.T) {
	brokers := startCluster(t)
	l, err := Open(Config{Brokers: brokers}, testLogger(t))
	require.NoError(t, err)
	var results []<-chan wal.AppendResult
	for i := range 100 {
		results = append(results, l.AppendAsync("ch", [][]byte{fmt.Appendf(nil, "r%d", i)}))
	}
	require.NoError(t, l.Close())
	acked := 0
	for _, ch := range results {
		r := <-ch
		if r.Err != nil {
			require.ErrorIs(t, r.Err, wal.ErrClosed, "%v", r.Err)
			continue
		}
		acked++
	}
	l2 := openLog(t, Config{Brokers: brokers})
	end, err := l2.End(context.Background(), "ch")
	require.NoError(t, err)
	require.GreaterOrEqual(t, end, int64(acked))
	require.Equal(t, 100, acked, "Close waits for pending appends")
}

// TestBrokersGone checks that with the brokers down appends fail after
// DeliveryTimeout instead of hanging, and Close still returns.
func TestBrokersGone(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	require.NoError(t, err)
	brokers := c.ListenAddrs() // not callable once c is closed
	l, err := Open(Config{
		Brokers: brokers, DeliveryTimeout: time.Second,
		RequestTimeout: 500 * time.Millisecond, CloseTimeout: 500 * time.Millisecond,
	}, testLogger(t))
	require.NoError(t, err)
	require.NoError(t, (<-l.AppendAsync("ch", [][]byte{[]byte("a")})).Err)
	c.Close()
	select {
	case r := <-l.AppendAsync("ch", [][]byte{[]byte("b")}):
		require.Error(t, r.Err)
	case <-time.After(30 * time.Second):
		t.Fatal("append did not fail")
	}
	r := <-l.AppendAsync("other", [][]byte{[]byte("c")})
	require.ErrorContains(t, r.Err, `create topic "other"`)
	_ = l.Close() // may report the appends it could not flush

	_, err = Open(Config{Brokers: brokers, RequestTimeout: 500 * time.Millisecond}, nil)
	require.ErrorContains(t, err, "unreachable")
}

// TestPing: Ping answers nil while a broker answers, an error naming the
// brokers once the log's client cannot reach one.
func TestPing(t *testing.T) {
	l := openLog(t, Config{})
	require.NoError(t, l.Ping(context.Background()))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := l.Ping(ctx)
	require.ErrorContains(t, err, "wal/kafka: ping [")
}

// TestEndWaitsOutALeaderElection: a partition without a leader yet (a topic
// just created, a broker electing after a restart) answers ListOffsets
// with LEADER_NOT_AVAILABLE; End asks again instead of failing the write
// that needs the offset (the first CreateCollection on a fresh Kafka).
func TestEndWaitsOutALeaderElection(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	l := openLog(t, Config{Brokers: c.ListenAddrs()})
	ctx := context.Background()
	res := <-l.AppendAsync("ch", [][]byte{[]byte("a"), []byte("b")})
	require.NoError(t, res.Err)

	var refused atomic.Int32
	c.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if refused.Load() >= 3 {
			return nil, nil, false // the broker answers
		}
		refused.Add(1)
		in := req.(*kmsg.ListOffsetsRequest)
		resp := in.ResponseKind().(*kmsg.ListOffsetsResponse)
		for _, rt := range in.Topics {
			st := kmsg.NewListOffsetsResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewListOffsetsResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = kerr.LeaderNotAvailable.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	end, err := l.End(ctx, "ch")
	require.NoError(t, err)
	require.EqualValues(t, 2, end)
	require.EqualValues(t, 3, refused.Load(), "asked again after each refusal")
}
