package expr

import (
	"math"
	"strconv"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
)

// valKind is the type of a constant value.
type valKind uint8

const (
	vkNull valKind = iota
	vkBool
	vkInt
	vkFloat
	vkString
	vkList
	vkObject // only inside JSON documents
)

func (k valKind) String() string {
	switch k {
	case vkBool:
		return "bool"
	case vkInt:
		return "integer"
	case vkFloat:
		return "float"
	case vkString:
		return "string"
	case vkList:
		return "list"
	case vkObject:
		return "object"
	}
	return "null"
}

// value is a constant: a literal, a folded constant expression, a template
// value or a decoded JSON value.
type value struct {
	k valKind
	b bool
	i int64
	f float64
	s string
	l []value
}

func boolVal(b bool) value     { return value{k: vkBool, b: b} }
func intVal(i int64) value     { return value{k: vkInt, i: i} }
func floatVal(f float64) value { return value{k: vkFloat, f: f} }
func strVal(s string) value    { return value{k: vkString, s: s} }
func listVal(l []value) value  { return value{k: vkList, l: l} }
func (v value) isNumber() bool { return v.k == vkInt || v.k == vkFloat }
func (v value) asFloat() float64 {
	if v.k == vkInt {
		return float64(v.i)
	}
	return v.f
}

// String renders v in expression syntax.
func (v value) String() string {
	switch v.k {
	case vkBool:
		return strconv.FormatBool(v.b)
	case vkInt:
		return strconv.FormatInt(v.i, 10)
	case vkFloat:
		s := strconv.FormatFloat(v.f, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEnN") {
			s += ".0"
		}
		return s
	case vkString:
		return strconv.Quote(v.s)
	case vkList:
		parts := make([]string, len(v.l))
		for i, e := range v.l {
			parts[i] = e.String()
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case vkObject:
		return "{...}"
	}
	return "null"
}

// equalValues compares two values the way JSON containment does: numbers by
// numeric value, lists element-wise, everything else by kind and content.
func equalValues(a, b value) bool {
	if a.isNumber() && b.isNumber() {
		if a.k == vkInt && b.k == vkInt {
			return a.i == b.i
		}
		return a.asFloat() == b.asFloat()
	}
	if a.k != b.k {
		return false
	}
	switch a.k {
	case vkBool:
		return a.b == b.b
	case vkString:
		return a.s == b.s
	case vkList:
		if len(a.l) != len(b.l) {
			return false
		}
		for i := range a.l {
			if !equalValues(a.l[i], b.l[i]) {
				return false
			}
		}
		return true
	case vkNull:
		return true
	}
	return false
}

// floatToInt reports the int64 equal to f, if there is one.
func floatToInt(f float64) (int64, bool) {
	if f != math.Trunc(f) || f < -9.223372036854775808e18 || f >= 9.223372036854775808e18 {
		return 0, false
	}
	return int64(f), true
}

// templateValue converts an expr_template_values entry into a constant.
func templateValue(t *schemapb.TemplateValue) (value, bool) {
	switch x := t.GetVal().(type) {
	case *schemapb.TemplateValue_BoolVal:
		return boolVal(x.BoolVal), true
	case *schemapb.TemplateValue_Int64Val:
		return intVal(x.Int64Val), true
	case *schemapb.TemplateValue_FloatVal:
		return floatVal(x.FloatVal), true
	case *schemapb.TemplateValue_StringVal:
		return strVal(x.StringVal), true
	case *schemapb.TemplateValue_ArrayVal:
		return templateArray(x.ArrayVal)
	}
	return value{}, false
}

func templateArray(a *schemapb.TemplateArrayValue) (value, bool) {
	var out []value
	switch d := a.GetData().(type) {
	case *schemapb.TemplateArrayValue_BoolData:
		for _, b := range d.BoolData.GetData() {
			out = append(out, boolVal(b))
		}
	case *schemapb.TemplateArrayValue_LongData:
		for _, n := range d.LongData.GetData() {
			out = append(out, intVal(n))
		}
	case *schemapb.TemplateArrayValue_DoubleData:
		for _, f := range d.DoubleData.GetData() {
			out = append(out, floatVal(f))
		}
	case *schemapb.TemplateArrayValue_StringData:
		for _, s := range d.StringData.GetData() {
			out = append(out, strVal(s))
		}
	case *schemapb.TemplateArrayValue_ArrayData:
		for _, e := range d.ArrayData.GetData() {
			v, ok := templateArray(e)
			if !ok {
				return value{}, false
			}
			out = append(out, v)
		}
	case *schemapb.TemplateArrayValue_JsonData:
		for _, raw := range d.JsonData.GetData() {
			v, ok := decodeJSON(raw)
			if !ok {
				return value{}, false
			}
			out = append(out, v)
		}
	default:
		return value{}, false
	}
	return listVal(out), true
}
