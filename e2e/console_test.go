package e2e

import (
	"bytes"
	"context"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
)

// withMetricsPort opens the metrics port (where /console is) on a free port.
func withMetricsPort(c *app.Config) { c.MetricsAddr = "127.0.0.1:0" }

// consoleGet fetches path from the server's console and returns the status and body.
func consoleGet(t *testing.T, s *server, path string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+s.metrics+path, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// consoleCollection makes a loaded two-field collection with 20 rows, one
// flushed segment of them, for the console tests.
func consoleCollection(ctx context.Context, t *testing.T, c *milvusclient.Client, coll string) {
	t.Helper()
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("tag").WithDataType(entity.FieldTypeVarChar).WithMaxLength(16)).
		WithField(entity.NewField().WithName("vec").WithDataType(entity.FieldTypeFloatVector).WithDim(2))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
	var ids []int64
	var tags []string
	var vecs [][]float32
	for i := range 20 {
		ids, tags, vecs = append(ids, int64(i)), append(tags, "t"+string(rune('a'+i%3))), append(vecs, []float32{float32(i), 1})
	}
	_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", ids).
		WithVarcharColumn("tag", tags).WithFloatVectorColumn("vec", 2, vecs))
	require.NoError(t, err)
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	indexAndLoad(ctx, t, c, coll, entity.L2)
}

// TestConsole: /console on the metrics port lists the collection; its page
// shows the schema, the index with its rows, the flushed segment; the
// playground's query and search return rows through REST v2, and a bad
// filter shows REST's error.
func TestConsole(t *testing.T) {
	s := startServer(t, t.TempDir(), withMetricsPort)
	c := s.client(t)
	ctx := ctxT(t)
	consoleCollection(ctx, t, c, "shown")

	code, body := consoleGet(t, s, "/console")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `<a href="/console/collection?db=default&amp;name=shown">shown</a>`)
	require.Contains(t, body, "<td>Loaded</td>")
	require.Contains(t, body, "Last hour")
	require.Contains(t, body, "Resident memory")

	page := "/console/collection?db=default&name=shown"
	code, body = consoleGet(t, s, page)
	require.Equal(t, http.StatusOK, code, body)
	for _, want := range []string{
		"<td>tag</td><td>VarChar</td><td>max_length=16</td>", "<td>vec</td><td>FloatVector</td><td>dim=2</td>",
		"primary key", "<td>FLAT</td><td>L2</td><td>Finished", "20 / 20", "Flushed", "L1", "20 rows",
	} {
		require.Contains(t, body, want)
	}

	q := url.Values{
		"db": {"default"}, "name": {"shown"}, "run": {"1"}, "mode": {"query"},
		"filter": {"id < 5"}, "output": {"id, tag"}, "limit": {"10"},
	}
	code, body = consoleGet(t, s, "/console/collection?"+q.Encode())
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "<p>5 rows</p>")
	require.Contains(t, body, "<th>id</th><th>tag</th>")
	require.Contains(t, body, "<tr><td>3</td><td>ta</td></tr>")

	q = url.Values{
		"db": {"default"}, "name": {"shown"}, "run": {"1"}, "mode": {"search"},
		"vector": {"[7, 1]"}, "limit": {"3"}, "output": {"tag"},
	}
	code, body = consoleGet(t, s, "/console/collection?"+q.Encode())
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "<p>3 rows</p>")
	require.Contains(t, body, "<th>id</th><th>distance</th><th>tag</th>")
	require.Contains(t, body, "<tr><td>7</td><td>0</td><td>tb</td></tr>", "the nearest row first, at distance 0")

	q.Set("mode", "query")
	q.Set("filter", "nope > 1")
	code, body = consoleGet(t, s, "/console/collection?"+q.Encode())
	require.Equal(t, http.StatusOK, code, body)
	require.Regexp(t, `<p class="err" id="play-error">[^<]*nope[^<]*\(code \d+\)</p>`, body)

	code, _ = consoleGet(t, s, "/console/collection?db=default&name=missing")
	require.Equal(t, http.StatusBadGateway, code)
	code, _ = consoleGet(t, s, "/console/nothing")
	require.Equal(t, http.StatusNotFound, code)

	t.Run("chromium", func(t *testing.T) { consoleInChromium(t, s) })
}

// consoleInChromium renders the collection page (with a search run) in
// headless Chromium: the DOM it builds has the collection's schema and the
// search's rows, and its screenshot is a real picture (many colours), not
// an empty page. Chromium is Debian's package (.ci/run installs it).
func consoleInChromium(t *testing.T, s *server) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install chromium; .ci/run installs it)")
	}
	q := url.Values{"db": {"default"}, "name": {"shown"}, "run": {"1"}, "mode": {"search"}, "vector": {"[7, 1]"}, "limit": {"3"}, "output": {"tag"}}
	page := "http://" + s.metrics + "/console/collection?" + q.Encode()
	dir := t.TempDir()
	run := func(args ...string) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		base := []string{
			"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--user-data-dir=" + filepath.Join(dir, "profile"), "--window-size=1200,1000",
		}
		cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, "chromium: %s", stderr.String())
		return out
	}
	dom := string(run("--dump-dom", page))
	require.Contains(t, dom, "default / shown")
	require.Contains(t, dom, "<td>vec</td><td>FloatVector</td>")
	require.Contains(t, dom, "<tr><td>7</td><td>0</td><td>tb</td></tr>")

	shot := filepath.Join(dir, "console.png")
	if d := os.Getenv("STRATA_CONSOLE_SHOT_DIR"); d != "" {
		shot = filepath.Join(d, "console.png") // keep the picture to look at
	}
	run("--screenshot="+shot, page)
	f, err := os.Open(shot)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	colours := map[uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[r>>8<<16|g>>8<<8|bl>>8] = true
		}
	}
	require.Greater(t, len(colours), 20, "the screenshot shows a rendered page (header, tables, text)")
	require.Equal(t, 1200, b.Dx())
}

// TestConsoleAuth: with authorization on, the console asks for credentials
// (401 with a Basic challenge) and serves a user who gives them.
func TestConsoleAuth(t *testing.T) {
	s := startServer(t, t.TempDir(), withAuth, withMetricsPort)
	code, body := consoleGet(t, s, "/console")
	require.Equal(t, http.StatusUnauthorized, code, body)
	code, _ = consoleGet(t, s, "/console", "Authorization", "Basic cm9vdDpub3Bl") // root:nope
	require.Equal(t, http.StatusUnauthorized, code)
	code, body = consoleGet(t, s, "/console", "Authorization", "Basic cm9vdDpNaWx2dXM=") // root:Milvus
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "No collections.")
}
