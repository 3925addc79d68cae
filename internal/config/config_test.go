package config

import (
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

type inner struct {
	Wait  time.Duration `json:"wait"`
	Count int           `json:"count"`
}

type Embedded struct {
	Extra string `json:"extra"`
}

type doc struct {
	Embedded
	Name     string            `json:"name"`
	Inner    inner             `json:"inner"`
	Waits    []time.Duration   `json:"waits"`
	Opt      *int64            `json:"opt"`
	ByName   map[string]inner  `json:"byName"`
	Labels   map[string]string `json:"labels"`
	Hosts    []string          `json:"hosts"`
	Computed []string          `json:"-"`
	Untagged bool
	secret   int
}

func defaults() doc {
	return doc{Name: "n", Inner: inner{Wait: time.Second, Count: 3}, Hosts: []string{"a"}, Computed: []string{"c"}, secret: 7}
}

func TestDecodeKeepsAbsentFields(t *testing.T) {
	d := defaults()
	require.NoError(t, Decode([]byte(`{"inner": {"wait": "1m30s"}, "extra": "x", "opt": 5,
		"waits": ["1ms", "2h"], "byName": {"k": {"wait": "2s"}}, "UNTAGGED": true}`), &d))
	want := defaults()
	want.Inner.Wait = 90 * time.Second
	want.Extra = "x"
	five := int64(5)
	want.Opt = &five
	want.Waits = []time.Duration{time.Millisecond, 2 * time.Hour}
	want.ByName = map[string]inner{"k": {Wait: 2 * time.Second}}
	want.Untagged = true
	require.Equal(t, want, d)

	// null keeps a struct or scalar and clears a pointer or slice.
	require.NoError(t, Decode([]byte(`{"inner": null, "name": null, "opt": null, "hosts": null}`), &d))
	require.Equal(t, "n", d.Name)
	require.Equal(t, 90*time.Second, d.Inner.Wait)
	require.Nil(t, d.Opt)
	require.Nil(t, d.Hosts)
}

func TestDecodeErrors(t *testing.T) {
	for body, msg := range map[string]string{
		`{"inner": {"wiat": "1s"}}`:     `inner: unknown field "wiat"`,
		`{"Computed": ["x"]}`:           `the document: unknown field "Computed"`,
		`{"secret": 1}`:                 `unknown field "secret"`,
		`{"inner": {"wait": 5}}`:        `inner.wait: a duration is a string such as "500ms"`,
		`{"inner": {"wait": "soon"}}`:   `inner.wait: time: invalid duration "soon"`,
		`{"waits": ["1s", "x"]}`:        `waits[1]: time: invalid duration "x"`,
		`{"byName": {"k": {"n": 1}}}`:   `byName.k: unknown field "n"`,
		`{"inner": {"count": "three"}}`: `inner.count: want int, got string`,
		`{"inner": []}`:                 `inner: want an object`,
		`{"hosts": "a"}`:                `hosts: want an array`,
		`[1]`:                           `the document: want an object`,
		`{"name": "a"} {"name": "b"}`:   `data after the end of the document`,
		`{"name": "a",}`:                `invalid character '}'`,
		``:                              `config: EOF`,
	} {
		d := defaults()
		err := Decode([]byte(body), &d)
		require.ErrorContains(t, err, msg, body)
	}
	require.Error(t, Decode([]byte(`{}`), doc{}))
}

func TestEncodeRoundTrip(t *testing.T) {
	d := defaults()
	d.Waits = []time.Duration{1500 * time.Millisecond}
	d.ByName = map[string]inner{"b": {Count: 1}, "a": {Wait: time.Hour}}
	b, err := Encode(d)
	require.NoError(t, err)
	require.JSONEq(t, `{
  "extra": "",
  "name": "n",
  "inner": {
    "wait": "1s",
    "count": 3
  },
  "waits": [
    "1.5s"
  ],
  "opt": null,
  "byName": {
    "a": {
      "wait": "1h",
      "count": 0
    },
    "b": {
      "wait": "0s",
      "count": 1
    }
  },
  "labels": null,
  "hosts": [
    "a"
  ],
  "Untagged": false
}
`, string(b))
	var back doc
	require.NoError(t, Decode(b, &back))
	d.Computed, d.secret = nil, 0
	require.Equal(t, d, back)
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 500 * time.Millisecond: "500ms", 2 * time.Second: "2s", 10 * time.Minute: "10m",
		time.Hour: "1h", 90 * time.Minute: "1h30m", time.Hour + time.Second: "1h0m1s", 24 * time.Hour: "24h",
	} {
		require.Equal(t, want, FormatDuration(d))
		back, err := time.ParseDuration(want)
		require.NoError(t, err)
		require.Equal(t, d, back)
	}
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestDecodeSelfReadingTypes: a type that reads and writes itself (JSON or
// text) is left to encoding/json, struct or not.
func TestDecodeSelfReadingTypes(t *testing.T) {
	type withTypes struct {
		Addr  netip.Addr `json:"addr"`
		Level slog.Level `json:"level"`
		At    time.Time  `json:"at"`
	}
	var v withTypes
	require.NoError(t, Decode([]byte(`{"addr": "10.0.0.1", "level": "WARN", "at": "2026-12-01T10:00:00Z"}`), &v))
	require.Equal(t, netip.MustParseAddr("10.0.0.1"), v.Addr)
	require.Equal(t, slog.LevelWarn, v.Level)
	require.Equal(t, 2026, v.At.Year())
	b, err := Encode(v)
	require.NoError(t, err)
	require.Contains(t, string(b), `"addr": "10.0.0.1"`)
	require.Contains(t, string(b), `"level": "WARN"`)
	var back withTypes
	require.NoError(t, Decode(b, &back))
	require.Equal(t, v, back)
}
