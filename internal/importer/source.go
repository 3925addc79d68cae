package importer

import (
	"context"
	"fmt"
	"path"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/errcode"
)

// Failed returns an ImportFailed (2100) error worded as Milvus's
// merr.WrapErrImportFailed words it: the reason, then ": importing data failed".
func Failed(format string, args ...any) error {
	return errcode.New(errcode.ImportFailed, "%s: importing data failed", fmt.Sprintf(format, args...))
}

// FileType is the format of one import task's files, told by their extension.
type FileType string

// The formats an import reads.
const (
	FileJSON    FileType = "JSON"
	FileNumpy   FileType = "Numpy"
	FileParquet FileType = "Parquet"
	// FileJSONLines is one JSON row object per line (.jsonl, .ndjson).
	FileJSONLines FileType = "JSONLines"
)

// TypeOf tells the format of one task's files, checking the file count a
// format takes (JSON and Parquet: one file; NumPy: one per field), with the
// errors Milvus gives.
func TypeOf(paths []string) (FileType, error) {
	if len(paths) == 0 {
		return "", Failed("no file to import")
	}
	ext := path.Ext(paths[0])
	jsonl := func(e string) bool { return e == ".jsonl" || e == ".ndjson" }
	for _, p := range paths[1:] {
		if e := path.Ext(p); e != ext && !(jsonl(e) && jsonl(ext)) {
			return "", Failed("inconsistency in file types, (%s) vs (%s)", paths[0], p)
		}
	}
	switch ext {
	case ".json":
		if len(paths) != 1 {
			return "", Failed("for JSON import, accepts only one file")
		}
		return FileJSON, nil
	case ".npy":
		return FileNumpy, nil
	case ".parquet":
		if len(paths) != 1 {
			return "", Failed("for Parquet import, accepts only one file")
		}
		return FileParquet, nil
	case ".jsonl", ".ndjson":
		if len(paths) != 1 {
			return "", Failed("for JSON import, accepts only one file")
		}
		return FileJSONLines, nil
	case ".csv":
		return "", Failed("importing %s files is not supported yet, files=%v", ext[1:], paths)
	}
	return "", Failed("unexpected file type, files=%v", paths)
}

// source is one task's files, opened: its rows can be read in batches.
type source interface {
	numRows() int
	// read converts rows [lo, hi) into a batch.
	read(lo, hi int) (*batch, error)
}

// openSource reads and opens one task's files.
func openSource(ctx context.Context, schema *schemapb.CollectionSchema, paths []string, files Files) (source, int64, error) {
	ft, err := TypeOf(paths)
	if err != nil {
		return nil, 0, err
	}
	data := make([][]byte, len(paths))
	var size int64
	for i, p := range paths {
		b, err := files.ReadFile(ctx, p)
		if err != nil {
			return nil, 0, err
		}
		data[i] = b
		size += int64(len(b))
	}
	var s source
	switch ft {
	case FileJSON:
		s, err = newJSONSource(schema, data[0])
	case FileJSONLines:
		s, err = newJSONLinesSource(schema, data[0])
	case FileNumpy:
		s, err = newNumpySource(schema, paths, data)
	case FileParquet:
		var ps *parquetSource
		ps, err = newParquetSource(ctx, schema, data[0])
		s = ps
	}
	if err != nil {
		return nil, size, fmt.Errorf("file %s: %w", paths[0], err)
	}
	return s, size, nil
}
