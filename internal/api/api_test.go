package api

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newTestObserver(slow time.Duration) (*Observer, *bytes.Buffer) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	return NewObserver(NewMetrics(prometheus.NewRegistry()), logger, slow), &buf
}

func TestFinishLogsOneLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    call
		want []string // substrings of the one line, or nil for no line
	}{
		{
			"ddl",
			call{method: "CreateIndex", db: "default", collection: "c", latency: time.Millisecond},
			[]string{"level=INFO", "msg=ddl", "method=CreateIndex", "collection=c", "latency=1ms"},
		},
		{
			"failed",
			call{method: "Search", db: "default", collection: "c", failed: true, code: 100, reason: "collection not found"},
			[]string{"level=WARN", `msg="request failed"`, "method=Search", "code=100", `reason="collection not found"`},
		},
		{
			"slow",
			call{method: "Search", db: "default", collection: "c", latency: 2 * time.Second},
			[]string{"level=WARN", `msg="slow request"`, "method=Search", "threshold=1s"},
		},
		{"read", call{method: "Search", db: "default", collection: "c", latency: time.Millisecond}, nil},
		{"describe", call{method: "DescribeCollection", db: "default", collection: "c"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, buf := newTestObserver(time.Second)
			o.finish(tc.c)
			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			if tc.want == nil {
				require.Empty(t, strings.TrimSpace(buf.String()))
				return
			}
			require.Len(t, lines, 1)
			for _, w := range tc.want {
				require.Contains(t, lines[0], w)
			}
		})
	}
}

func TestRESTOutcome(t *testing.T) {
	code, rows, msg := restOutcome([]byte(`{"code":0,"data":{"insertCount":12,"insertIds":[1,2`))
	require.Zero(t, code)
	require.EqualValues(t, 12, rows, "a cut-off body still gives the count")
	require.Empty(t, msg)
	code, _, msg = restOutcome([]byte(`{"code":1100,"message":"invalid parameter"}`))
	require.EqualValues(t, 1100, code)
	require.Equal(t, "invalid parameter", msg)
}

func TestRESTHandlerObserves(t *testing.T) {
	o, buf := newTestObserver(0)
	h := o.RESTHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"code":100,"message":"collection not found[collection=x]"}`))
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v2/vectordb/entities/search",
		strings.NewReader(`{"collectionName":"x","data":[[1,2]]}`)))
	require.Contains(t, rec.Body.String(), "collection not found", "the response passes through")
	require.Contains(t, buf.String(), "method=Search")
	require.Contains(t, buf.String(), "collection=x")
	require.Contains(t, buf.String(), "code=100")
}
