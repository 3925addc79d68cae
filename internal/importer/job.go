package importer

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// State is an import job's or task's state, named as Milvus names them.
type State string

// Job and task states. A job is Pending until its worker takes it,
// Importing while it reads files and writes segments, then Completed (its
// segments committed, visible) or Failed (nothing visible).
const (
	StatePending   State = "Pending"
	StateImporting State = "Importing"
	StateCompleted State = "Completed"
	StateFailed    State = "Failed"
)

// Task is one group of files of a job: one JSON or Parquet file, or the
// NumPy files of one batch (one per field).
type Task struct {
	Files        []string `json:"files"`
	FileSize     int64    `json:"file_size"`
	State        State    `json:"state"`
	Reason       string   `json:"reason,omitempty"`
	Progress     int64    `json:"progress"`
	TotalRows    int64    `json:"total_rows"`
	ImportedRows int64    `json:"imported_rows"`
	CompleteTime string   `json:"complete_time,omitempty"`
}

// FileName is how the task is named in progress reports: its files, comma-separated.
func (t Task) FileName() string { return strings.Join(t.Files, ",") }

// Job is an import job's durable record (key JobKey(ID) in the meta store).
type Job struct {
	ID             int64             `json:"id"`
	DB             string            `json:"db"`
	CollectionID   int64             `json:"collection_id"`
	CollectionName string            `json:"collection_name"`
	Partition      string            `json:"partition,omitempty"`
	Options        map[string]string `json:"options,omitempty"`
	State          State             `json:"state"`
	Reason         string            `json:"reason,omitempty"`
	Progress       int64             `json:"progress"`
	Tasks          []Task            `json:"tasks"`
	TotalRows      int64             `json:"total_rows"`
	ImportedRows   int64             `json:"imported_rows"`
	Segments       []int64           `json:"segments,omitempty"`
	CreateTime     string            `json:"create_time"`
	CompleteTime   string            `json:"complete_time,omitempty"`
	// Timeout cancels the job when it runs longer (0 = no limit): the
	// "timeout" option.
	Timeout time.Duration `json:"timeout,omitempty"`
}

// FileSize is the total size of the job's files read so far.
func (j Job) FileSize() int64 {
	var n int64
	for _, t := range j.Tasks {
		n += t.FileSize
	}
	return n
}

// JobPrefix is the meta-store prefix of import job records.
const JobPrefix = "import/jobs/"

// JobKey is the meta-store key of job id's record.
func JobKey(id int64) string { return JobPrefix + strconv.FormatInt(id, 10) }

// timeLayout is how job times are written (Milvus's RFC 3339 form).
const timeLayout = time.RFC3339

// Request is an import request as the proxy checked it.
type Request struct {
	DB             string
	CollectionID   int64
	CollectionName string
	// Partition is the partition name ("" = the default partition, or
	// routed by the partition key).
	Partition string
	// Files holds one list of paths per task.
	Files   [][]string
	Options map[string]string
}

// parseTimeout reads the "timeout" option: a Go duration ("300s", "1.5h")
// or a number of seconds.
func parseTimeout(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if n, err := strconv.ParseFloat(s, 64); err == nil && n >= 0 {
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("the timeout option %q is not a duration", s)
	}
	return d, nil
}
