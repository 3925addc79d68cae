// Package config reads and writes configuration documents: JSON objects
// whose keys are the `json` names of the fields of a component's typed
// Config struct. The structs are the only declaration of the configuration;
// this package adds what encoding/json lacks for them:
//
//   - Decode applies a document onto a value that already holds the
//     defaults, so an absent key keeps its default, and an unknown key is an
//     error naming its path ("dataCoord.compaction.l0Cont").
//   - A time.Duration field is written as a Go duration string ("500ms",
//     "2m"), never as nanoseconds, in both directions.
//
// Keys follow encoding/json: the field's `json` tag name (a field tagged
// "-" and unexported fields are not part of the document), an embedded
// struct without a tag is inlined, and a key matches a field name exactly or,
// failing that, case-insensitively.
package config

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"time"
)

var (
	durationType        = reflect.TypeFor[time.Duration]()
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	marshalerType       = reflect.TypeFor[json.Marshaler]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
)

// Decode applies the JSON document data onto *dst, a pointer to a struct
// that holds the defaults. Keys absent from data keep their values; null
// keeps the value too, except for a pointer, slice or map, which it clears.
// An unknown key, a value of the wrong type, a duration that is not a Go
// duration string, or data after the document is an error that names the
// key's path.
func Decode(data []byte, dst any) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("config: Decode needs a non-nil pointer to a struct, got %T", dst)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("config: data after the end of the document")
	}
	return decode("", raw, v.Elem())
}

// decode sets v from raw; path names v in errors ("" is the document).
func decode(path string, raw json.RawMessage, v reflect.Value) error {
	null := bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
	if pt := reflect.PointerTo(v.Type()); pt.Implements(unmarshalerType) || pt.Implements(textUnmarshalerType) {
		// The type reads itself (time.Time, netip.Addr, slog.Level, …).
		return plain(path, raw, v)
	}
	switch {
	case v.Type() == durationType:
		if null {
			return nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("config: %s: a duration is a string such as \"500ms\" or \"2m\", got %s", name(path), raw)
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("config: %s: %w", name(path), err)
		}
		v.SetInt(int64(d))
		return nil
	case v.Kind() == reflect.Struct:
		if null {
			return nil
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return fmt.Errorf("config: %s: want an object, got %s", name(path), raw)
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fields := fieldsOf(v.Type())
		for _, k := range keys {
			f, ok := lookup(fields, k)
			if !ok {
				return fmt.Errorf("config: %s: unknown field %q", name(path), k)
			}
			if err := decode(join(path, f.name), obj[k], fieldByIndex(v, f.index)); err != nil {
				return err
			}
		}
		return nil
	case v.Kind() == reflect.Pointer:
		if null {
			v.SetZero()
			return nil
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return decode(path, raw, v.Elem())
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() != reflect.Uint8:
		if null {
			v.SetZero()
			return nil
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			return fmt.Errorf("config: %s: want an array, got %s", name(path), raw)
		}
		s := reflect.MakeSlice(v.Type(), len(elems), len(elems))
		for i, e := range elems {
			if err := decode(fmt.Sprintf("%s[%d]", path, i), e, s.Index(i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	case v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String:
		if null {
			v.SetZero()
			return nil
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return fmt.Errorf("config: %s: want an object, got %s", name(path), raw)
		}
		m := reflect.MakeMapWithSize(v.Type(), len(obj))
		for k, e := range obj {
			elem := reflect.New(v.Type().Elem()).Elem()
			if err := decode(join(path, k), e, elem); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), elem)
		}
		v.Set(m)
		return nil
	}
	return plain(path, raw, v)
}

// plain decodes raw into v with encoding/json, strictly.
func plain(path string, raw json.RawMessage, v reflect.Value) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v.Addr().Interface()); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("config: %s: want %s, got %s", name(path), te.Type, te.Value)
		}
		return fmt.Errorf("config: %s: %w", name(path), err)
	}
	return nil
}

// Encode writes v (a struct or a pointer to one) as an indented JSON
// document in field order, durations as Go duration strings ("10m", "1h30m",
// "500ms"). Decode reads it back to the same value.
func Encode(v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	for rv.IsValid() && rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if rv.IsValid() && rv.Kind() != reflect.Pointer {
		// An addressable copy, so that fieldByIndex may step through nil
		// embedded pointers without touching v.
		c := reflect.New(rv.Type()).Elem()
		c.Set(rv)
		rv = c
	}
	var buf bytes.Buffer
	if err := encode(&buf, rv); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, buf.Bytes(), "", "  "); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func encode(buf *bytes.Buffer, v reflect.Value) error {
	if !v.IsValid() {
		buf.WriteString("null")
		return nil
	}
	if (v.Type().Implements(marshalerType) || v.Type().Implements(textMarshalerType)) && (v.Kind() != reflect.Pointer || !v.IsNil()) {
		return marshal(buf, v)
	}
	switch {
	case v.Type() == durationType:
		return marshal(buf, reflect.ValueOf(FormatDuration(time.Duration(v.Int()))))
	case v.Kind() == reflect.Struct:
		buf.WriteByte('{')
		for i, f := range fieldsOf(v.Type()) {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := marshal(buf, reflect.ValueOf(f.name)); err != nil {
				return err
			}
			buf.WriteByte(':')
			if err := encode(buf, fieldByIndex(v, f.index)); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface:
		if v.IsNil() {
			buf.WriteString("null")
			return nil
		}
		return encode(buf, v.Elem())
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() != reflect.Uint8:
		if v.IsNil() {
			buf.WriteString("null")
			return nil
		}
		buf.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := encode(buf, v.Index(i)); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String:
		if v.IsNil() {
			buf.WriteString("null")
			return nil
		}
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := marshal(buf, reflect.ValueOf(k.String())); err != nil {
				return err
			}
			buf.WriteByte(':')
			if err := encode(buf, v.MapIndex(k)); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	}
	return marshal(buf, v)
}

func marshal(buf *bytes.Buffer, v reflect.Value) error {
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	buf.Write(b)
	return nil
}

// FormatDuration writes d as a Go duration string without zero trailing
// units: "10m" rather than "10m0s", "1h" rather than "1h0m0s".
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// field is one key of a struct's document.
type field struct {
	name  string
	index []int // reflect.Value.FieldByIndex path (embedded structs inlined)
}

// fieldsOf lists the document keys of struct type t in field order.
func fieldsOf(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if sf.Anonymous && tag == "" {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for _, f := range fieldsOf(ft) {
					out = append(out, field{name: f.name, index: append([]int{i}, f.index...)})
				}
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if tag == "" {
			tag = sf.Name
		}
		out = append(out, field{name: tag, index: []int{i}})
	}
	return out
}

// lookup finds the field of key k: an exact name, else a case-insensitive one.
func lookup(fields []field, k string) (field, bool) {
	for _, f := range fields {
		if f.name == k {
			return f, true
		}
	}
	for _, f := range fields {
		if strings.EqualFold(f.name, k) {
			return f, true
		}
	}
	return field{}, false
}

// fieldByIndex is v.FieldByIndex, allocating nil embedded struct pointers.
func fieldByIndex(v reflect.Value, index []int) reflect.Value {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// name is path for messages: "the document" for the root.
func name(path string) string {
	if path == "" {
		return "the document"
	}
	return path
}
