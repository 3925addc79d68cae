package e2e

import (
	"bytes"
	le "encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
)

// importSchema has a field of most types, a nullable one and the dynamic field.
func importSchema(name string) *entity.Schema {
	return entity.NewSchema().WithName(name).WithDynamicFieldEnabled(true).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("name").WithDataType(entity.FieldTypeVarChar).WithMaxLength(64)).
		WithField(entity.NewField().WithName("age").WithDataType(entity.FieldTypeInt32).WithNullable(true)).
		WithField(entity.NewField().WithName("score").WithDataType(entity.FieldTypeDouble)).
		WithField(entity.NewField().WithName("doc").WithDataType(entity.FieldTypeJSON)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(4)).
		WithField(entity.NewField().WithName("h").WithDataType(entity.FieldTypeFloat16Vector).WithDim(4)).
		WithField(entity.NewField().WithName("b").WithDataType(entity.FieldTypeBinaryVector).WithDim(16)).
		WithField(entity.NewField().WithName("q").WithDataType(entity.FieldTypeInt8Vector).WithDim(4))
}

// importRow is row i's expected values.
type importRow struct {
	id    int64
	name  string
	age   *int32
	score float64
	doc   string
	v     []float32
	h     []float32 // exactly representable in float16
	b     []byte
	q     []int8
	color string // dynamic
}

func makeImportRow(i int) importRow {
	r := importRow{
		id: int64(i), name: fmt.Sprintf("n%d", i), score: float64(i) / 4,
		doc: fmt.Sprintf(`{"k":%d}`, i), v: []float32{float32(i), 1, 0, -1},
		h: []float32{float32(i % 8), 0.5, 1, 2}, b: []byte{byte(i), 0xff}, q: []int8{int8(i % 100), -1, 0, 1},
		color: fmt.Sprintf("c%d", i%3),
	}
	if i%5 != 0 {
		a := int32(i)
		r.age = &a
	}
	return r
}

func f16bytes(fs []float32) []byte {
	out := make([]byte, 2*len(fs))
	for i, f := range fs {
		// Values here are small integers or halves: exact in float16.
		bits := math.Float32bits(f)
		sign := uint16(bits>>16) & 0x8000
		exp := int((bits>>23)&0xff) - 127 + 15
		mant := uint16((bits >> 13) & 0x3ff)
		var h uint16
		if f != 0 {
			h = sign | uint16(exp)<<10 | mant
		}
		le.LittleEndian.PutUint16(out[2*i:], h)
	}
	return out
}

func writeJSONRows(t *testing.T, path string, lo, hi int) {
	t.Helper()
	var rows []map[string]any
	for i := lo; i < hi; i++ {
		r := makeImportRow(i)
		row := map[string]any{
			"id": r.id, "name": r.name, "score": r.score, "doc": json.RawMessage(r.doc), "v": r.v, "h": r.h,
			"b": []int{int(r.b[0]), int(r.b[1])}, "q": r.q, "color": r.color,
		}
		if r.age != nil {
			row["age"] = *r.age
		}
		rows = append(rows, row)
	}
	b, err := json.Marshal(map[string]any{"rows": rows})
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

func writeParquetRows(t *testing.T, path string, lo, hi int) {
	t.Helper()
	mem := memory.DefaultAllocator
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "age", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64},
		{Name: "doc", Type: arrow.BinaryTypes.String},
		{Name: "v", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32)},
		{Name: "h", Type: arrow.ListOf(arrow.PrimitiveTypes.Uint8)},
		{Name: "b", Type: arrow.ListOf(arrow.PrimitiveTypes.Uint8)},
		{Name: "q", Type: arrow.ListOf(arrow.PrimitiveTypes.Int8)},
		{Name: "$meta", Type: arrow.BinaryTypes.String},
	}, nil)
	rb := array.NewRecordBuilder(mem, sch)
	defer rb.Release()
	for i := lo; i < hi; i++ {
		r := makeImportRow(i)
		rb.Field(0).(*array.Int64Builder).Append(r.id)
		rb.Field(1).(*array.StringBuilder).Append(r.name)
		if r.age != nil {
			rb.Field(2).(*array.Int32Builder).Append(*r.age)
		} else {
			rb.Field(2).AppendNull()
		}
		rb.Field(3).(*array.Float64Builder).Append(r.score)
		rb.Field(4).(*array.StringBuilder).Append(r.doc)
		lb := rb.Field(5).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.Float32Builder).AppendValues(r.v, nil)
		for k, raw := range [][]byte{f16bytes(r.h), r.b} {
			lb := rb.Field(6 + k).(*array.ListBuilder)
			lb.Append(true)
			lb.ValueBuilder().(*array.Uint8Builder).AppendValues(raw, nil)
		}
		lb = rb.Field(8).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.Int8Builder).AppendValues(r.q, nil)
		rb.Field(9).(*array.StringBuilder).Append(fmt.Sprintf(`{"color":%q}`, r.color))
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	tbl := array.NewTableFromRecords(sch, []arrow.RecordBatch{rec})
	defer tbl.Release()
	var buf bytes.Buffer
	require.NoError(t, pqarrow.WriteTable(tbl, &buf, 64, nil, pqarrow.DefaultWriterProps()))
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
}

// npyFile encodes a C-ordered little-endian .npy array.
func npyFile(descr string, shape []int, data []byte) []byte {
	dims := ""
	for _, d := range shape {
		dims += strconv.Itoa(d) + ","
	}
	if len(shape) > 1 {
		dims = dims[:len(dims)-1]
	}
	header := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, dims)
	pad := 64 - (10+len(header)+1)%64
	header += string(bytes.Repeat([]byte(" "), pad%64)) + "\n"
	out := append([]byte("\x93NUMPY\x01\x00"), byte(len(header)), byte(len(header)>>8))
	return append(out, header...)
}

func writeNumpyRows(t *testing.T, dir string, lo, hi int) []string {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	n := hi - lo
	files := map[string][]byte{}
	var id, score, v, h, b, q []byte
	var names, docs, metas []string
	for i := lo; i < hi; i++ {
		r := makeImportRow(i)
		id = le.LittleEndian.AppendUint64(id, uint64(r.id))
		score = le.LittleEndian.AppendUint64(score, math.Float64bits(r.score))
		for _, f := range r.v {
			v = le.LittleEndian.AppendUint32(v, math.Float32bits(f))
		}
		h = append(h, f16bytes(r.h)...)
		b = append(b, r.b...)
		for _, x := range r.q {
			q = append(q, byte(x))
		}
		names, docs = append(names, r.name), append(docs, r.doc)
		metas = append(metas, fmt.Sprintf(`{"color":%q}`, r.color))
	}
	utf32 := func(ss []string) ([]byte, int) {
		width := 1
		for _, s := range ss {
			width = max(width, len(s))
		}
		var out []byte
		for _, s := range ss {
			for k := 0; k < width; k++ {
				var r uint32
				if k < len(s) {
					r = uint32(s[k])
				}
				out = le.LittleEndian.AppendUint32(out, r)
			}
		}
		return out, width
	}
	files["id"] = append(npyFile("<i8", []int{n}, nil), id...)
	files["score"] = append(npyFile("<f8", []int{n}, nil), score...)
	files["v"] = append(npyFile("<f4", []int{n, 4}, nil), v...)
	files["h"] = append(npyFile("|u1", []int{n, 8}, nil), h...)
	files["b"] = append(npyFile("|u1", []int{n, 2}, nil), b...)
	files["q"] = append(npyFile("|i1", []int{n, 4}, nil), q...)
	for name, ss := range map[string][]string{"name": names, "doc": docs, "$meta": metas} {
		data, w := utf32(ss)
		files[name] = append(npyFile("<U"+strconv.Itoa(w), []int{n}, nil), data...)
	}
	var paths []string
	for name, data := range files {
		p := filepath.Join(dir, name+".npy")
		require.NoError(t, os.WriteFile(p, data, 0o644))
		paths = append(paths, p)
	}
	return paths
}

// waitImport polls GetImportState until the job ends.
func waitImport(t *testing.T, raw milvuspb.MilvusServiceClient, id int64) *milvuspb.GetImportStateResponse {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := raw.GetImportState(ctxT(t), &milvuspb.GetImportStateRequest{Task: id})
		require.NoError(t, err)
		require.Zero(t, st.GetStatus().GetCode(), st.GetStatus().GetReason())
		if st.GetState() == commonpb.ImportState_ImportCompleted || st.GetState() == commonpb.ImportState_ImportFailed {
			return st
		}
		require.True(t, time.Now().Before(deadline), "import job %d did not end", id)
		time.Sleep(50 * time.Millisecond)
	}
}

func importInfo(st *milvuspb.GetImportStateResponse, key string) string {
	for _, kv := range st.GetInfos() {
		if kv.GetKey() == key {
			return kv.GetValue()
		}
	}
	return ""
}

func restCall(t *testing.T, addr, path string, body any) map[string]any {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	resp, err := http.Post("http://"+addr+"/v2/vectordb/"+path, "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out
}

// TestBulkImport imports BulkWriter-shaped JSON, Parquet and NumPy files
// from the object store (and NumPy from local paths), each job through the
// v1 RPCs or REST, queries every row back with every field, and checks that
// a corrupt file and a bad value fail their jobs with nothing visible.
func TestBulkImport(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, func(c *app.Config) { c.Import.AllowLocalPaths = true })
	c := s.client(t)
	raw := s.rawClient(t)
	ctx := ctxT(t)
	const coll = "imp"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, importSchema(coll))))
	for field, idx := range map[string]index.Index{
		"v": index.NewHNSWIndex(entity.L2, 8, 64), "h": index.NewFlatIndex(entity.L2),
		"b": index.NewBinFlatIndex(entity.HAMMING), "q": index.NewHNSWIndex(entity.L2, 8, 64),
	} {
		it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, field, idx))
		require.NoError(t, err, field)
		require.NoError(t, it.Await(ctx), field)
	}
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))

	store := s.storageDir(t)
	writeJSONRows(t, filepath.Join(store, "bulk/rows.json"), 0, 300)
	writeParquetRows(t, filepath.Join(store, "bulk/rows.parquet"), 300, 700)
	local := writeNumpyRows(t, filepath.Join(t.TempDir(), "np"), 700, 1000)

	count := func() int64 {
		rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithOutputFields("count(*)").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		n, _ := rs.GetColumn("count(*)").GetAsInt64(0)
		return n
	}

	// v1 RPC (utility.do_bulk_insert): one JSON file.
	resp, err := raw.Import(ctx, &milvuspb.ImportRequest{CollectionName: coll, Files: []string{"bulk/rows.json"}})
	require.NoError(t, err)
	require.Zero(t, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
	require.Len(t, resp.GetTasks(), 1)
	st := waitImport(t, raw, resp.GetTasks()[0])
	require.Equal(t, commonpb.ImportState_ImportCompleted, st.GetState(), importInfo(st, "failed_reason"))
	require.EqualValues(t, 300, st.GetRowCount())
	require.Equal(t, "100", importInfo(st, "progress_percent"))
	require.EqualValues(t, 300, count())

	// REST v2: the Parquet file and the NumPy files as two tasks of one job.
	cr := restCall(t, s.addr, "jobs/import/create", map[string]any{
		"collectionName": coll, "files": [][]string{{"bulk/rows.parquet"}, local},
	})
	require.EqualValues(t, 0, cr["code"], "%v", cr)
	require.NotNil(t, cr["data"], "%v", cr)
	jobID := cr["data"].(map[string]any)["jobId"].(string)
	var prog map[string]any
	require.Eventually(t, func() bool {
		prog = restCall(t, s.addr, "jobs/import/get_progress", map[string]any{"jobId": jobID})
		st := prog["data"].(map[string]any)["state"]
		return st == "Completed" || st == "Failed"
	}, 60*time.Second, 50*time.Millisecond)
	data := prog["data"].(map[string]any)
	require.Equal(t, "Completed", data["state"], data["reason"])
	require.EqualValues(t, 100, data["progress"])
	require.EqualValues(t, 700, data["importedRows"])
	require.EqualValues(t, 700, data["totalRows"])
	details := data["details"].([]any)
	require.Len(t, details, 2)
	require.Equal(t, "bulk/rows.parquet", details[0].(map[string]any)["fileName"])
	require.EqualValues(t, 400, details[0].(map[string]any)["importedRows"])
	require.EqualValues(t, 1000, count())

	// Every row, every field.
	rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id >= 0").
		WithOutputFields("*").WithLimit(2000).WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	require.Equal(t, 1000, rs.ResultCount)
	seen := map[int64]bool{}
	for i := 0; i < rs.ResultCount; i++ {
		id, err := rs.GetColumn("id").GetAsInt64(i)
		require.NoError(t, err)
		want := makeImportRow(int(id))
		if id >= 700 {
			want.age = nil // the NumPy files leave the nullable field out
		}
		seen[id] = true
		name, _ := rs.GetColumn("name").GetAsString(i)
		require.Equal(t, want.name, name)
		isNull, err := rs.GetColumn("age").IsNull(i)
		require.NoError(t, err)
		require.Equal(t, want.age == nil, isNull, "row %d age", id)
		if want.age != nil {
			age, _ := rs.GetColumn("age").GetAsInt64(i)
			require.EqualValues(t, *want.age, age)
		}
		score, _ := rs.GetColumn("score").GetAsDouble(i)
		require.Equal(t, want.score, score)
		doc, _ := rs.GetColumn("doc").Get(i)
		require.JSONEq(t, want.doc, string(doc.([]byte)), "row %d doc", id)
		v, _ := rs.GetColumn("v").Get(i)
		require.Equal(t, entity.FloatVector(want.v), v, "row %d v", id)
		h, _ := rs.GetColumn("h").Get(i)
		require.Equal(t, f16bytes(want.h), []byte(h.(entity.Float16Vector)), "row %d h", id)
		b, _ := rs.GetColumn("b").Get(i)
		require.Equal(t, want.b, []byte(b.(entity.BinaryVector)), "row %d b", id)
		q, _ := rs.GetColumn("q").Get(i)
		require.Equal(t, entity.Int8Vector(want.q), q, "row %d q", id)
		meta, err := rs.GetColumn("$meta").Get(i)
		require.NoError(t, err, "row %d dynamic", id)
		require.JSONEq(t, fmt.Sprintf(`{"color":%q}`, want.color), string(meta.([]byte)), "row %d dynamic", id)
	}
	require.Len(t, seen, 1000)

	// Search finds an imported row.
	sr, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 1, []entity.Vector{entity.FloatVector(makeImportRow(777).v)}).
		WithANNSField("v").WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	top, _ := sr[0].IDs.GetAsInt64(0)
	require.EqualValues(t, 777, top)

	// A corrupt Parquet file fails its job, naming the file; a bad value
	// in the JSON file's row 157 fails its job naming the row and field;
	// neither leaves a row visible (the JSON job's 156 good rows before it
	// included).
	require.NoError(t, os.WriteFile(filepath.Join(store, "bulk/bad.parquet"), []byte("PAR1 this is not parquet PAR1"), 0o644))
	writeJSONRows(t, filepath.Join(store, "bulk/badrow.json"), 2000, 2300)
	var rows map[string][]map[string]any
	b, err := os.ReadFile(filepath.Join(store, "bulk/badrow.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rows))
	rows["rows"][157]["v"] = []float32{1, 2, 3}
	b, err = json.Marshal(rows)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(store, "bulk/badrow.json"), b, 0o644))
	for file, want := range map[string][]string{
		"bulk/bad.parquet":  {"bulk/bad.parquet", "Parquet"},
		"bulk/badrow.json":  {"bulk/badrow.json", "row 157", `"v"`, "dimensions"},
		"bulk/missing.json": {"bulk/missing.json", "does not exist"},
	} {
		resp, err := raw.Import(ctx, &milvuspb.ImportRequest{CollectionName: coll, Files: []string{file}})
		require.NoError(t, err)
		require.Zero(t, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
		st := waitImport(t, raw, resp.GetTasks()[0])
		require.Equal(t, commonpb.ImportState_ImportFailed, st.GetState(), file)
		for _, w := range want {
			require.Contains(t, importInfo(st, "failed_reason"), w, file)
		}
	}
	require.EqualValues(t, 1000, count())

	// Requests refused up front, with Milvus's messages.
	for files, want := range map[string][]string{
		"two json":    {"a.json", "b.json"},
		"mixed":       {"a.json", "b.npy"},
		"unknown ext": {"a.txt"},
	} {
		resp, err := raw.Import(ctx, &milvuspb.ImportRequest{CollectionName: coll, Files: want})
		require.NoError(t, err)
		require.EqualValues(t, 2100, resp.GetStatus().GetCode(), files)
	}
	resp, err = raw.Import(ctx, &milvuspb.ImportRequest{CollectionName: "nope", Files: []string{"a.json"}})
	require.NoError(t, err)
	require.EqualValues(t, 100, resp.GetStatus().GetCode())

	// The listings show every job.
	lr, err := raw.ListImportTasks(ctx, &milvuspb.ListImportTasksRequest{CollectionName: coll})
	require.NoError(t, err)
	require.Len(t, lr.GetTasks(), 5)
	list := restCall(t, s.addr, "jobs/import/list", map[string]any{"collectionName": coll})
	require.Len(t, list["data"].(map[string]any)["records"], 5)

	// Jobs survive a restart.
	s.stop()
	s = startServer(t, dir, func(c *app.Config) { c.Import.AllowLocalPaths = true })
	prog = restCall(t, s.addr, "jobs/import/describe", map[string]any{"jobId": jobID})
	require.Equal(t, "Completed", prog["data"].(map[string]any)["state"])
	c = s.client(t)
	require.EqualValues(t, 1000, count())
}

// TestBulkImportAutoIDPartitionKey: rows without their auto-ID key get
// generated ones, rows of a partition-key collection are routed by the key
// as inserts are, and naming a partition there is refused as in Milvus.
func TestBulkImportAutoIDPartitionKey(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client(t)
	raw := s.rawClient(t)
	ctx := ctxT(t)
	const coll = "impkey"
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("pk").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true).WithIsAutoID(true)).
		WithField(entity.NewField().WithName("tenant").WithDataType(entity.FieldTypeVarChar).WithMaxLength(16).WithIsPartitionKey(true)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(2))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema).WithNumPartitions(4)))
	var rows []map[string]any
	for i := 0; i < 500; i++ {
		rows = append(rows, map[string]any{"tenant": fmt.Sprintf("t%d", i%7), "v": []float32{float32(i), 1}})
	}
	b, err := json.Marshal(rows)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(s.storageDir(t), "k"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(s.storageDir(t), "k", "rows.json"), b, 0o644))

	resp, err := raw.Import(ctx, &milvuspb.ImportRequest{CollectionName: coll, PartitionName: "_default_0", Files: []string{"k/rows.json"}})
	require.NoError(t, err)
	require.EqualValues(t, 2100, resp.GetStatus().GetCode())
	require.Contains(t, resp.GetStatus().GetReason(), "not allow to set partition name for collection with partition key")

	resp, err = raw.Import(ctx, &milvuspb.ImportRequest{CollectionName: coll, Files: []string{"k/rows.json"}})
	require.NoError(t, err)
	require.Zero(t, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
	st := waitImport(t, raw, resp.GetTasks()[0])
	require.Equal(t, commonpb.ImportState_ImportCompleted, st.GetState(), importInfo(st, "failed_reason"))

	it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "v", index.NewFlatIndex(entity.L2)))
	require.NoError(t, err)
	require.NoError(t, it.Await(ctx))
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter(`tenant == "t3"`).WithOutputFields("pk", "tenant").
		WithLimit(1000).WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	require.Equal(t, 71, rs.ResultCount) // i%7 == 3 for i < 500
	all, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("pk > 0").WithOutputFields("pk").
		WithLimit(1000).WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	keys := map[int64]bool{}
	for i := 0; i < all.ResultCount; i++ {
		k, err := all.GetColumn("pk").GetAsInt64(i)
		require.NoError(t, err)
		keys[k] = true
	}
	require.Len(t, keys, 500, "every row got its own generated key")
	// The rows are spread over the key's partitions, as inserts would be.
	segs, err := raw.GetPersistentSegmentInfo(ctx, &milvuspb.GetPersistentSegmentInfoRequest{CollectionName: coll})
	require.NoError(t, err)
	parts := map[int64]bool{}
	for _, sg := range segs.GetInfos() {
		parts[sg.GetPartitionID()] = true
	}
	require.Greater(t, len(parts), 1)
}
