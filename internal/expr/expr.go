package expr

import (
	"errors"
	"slices"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/strata-db/strata/internal/column"
)

// Batch is a set of rows in columnar form, keyed by field ID.
type Batch interface {
	// Len is the number of rows.
	Len() int
	// Column returns the column of field fieldID, or nil if the batch lacks it.
	Column(fieldID int64) column.Column
}

// Expr is a compiled, type-checked filter. It is immutable and safe for
// concurrent use.
type Expr struct {
	src    string
	root   pred // nil for the empty filter
	fields []int64
	pk     *schemapb.FieldSchema
}

// Compile parses and type-checks src against schema. templates may be nil.
// An empty (or all-whitespace) src matches every row. Every failure is an
// *Error carrying the byte position of the problem.
func Compile(src string, schema *schemapb.CollectionSchema, templates map[string]*schemapb.TemplateValue) (*Expr, error) {
	return compile(src, schema, templates, "")
}

func compile(src string, schema *schemapb.CollectionSchema, templates map[string]*schemapb.TemplateValue, tz string) (*Expr, error) {
	e := &Expr{src: src}
	for _, f := range schema.GetFields() {
		if f.GetIsPrimaryKey() {
			e.pk = f
		}
	}
	toks, err := lex(src)
	if err != nil {
		return nil, withSrc(err, src)
	}
	if len(toks) == 1 {
		return e, nil
	}
	p := &parser{toks: toks, templates: templates, tz: tz}
	ast, err := p.parse()
	if err != nil {
		return nil, withSrc(err, src)
	}
	c := newChecker(schema)
	o, err := c.check(ast)
	if err != nil {
		return nil, withSrc(err, src)
	}
	root, err := c.toPred(o)
	if err != nil {
		detail := err.Error()
		if pe := (*Error)(nil); errors.As(err, &pe) {
			detail = pe.Msg
		}
		return nil, &Error{Pos: o.pos, Msg: milvusType(o), Src: src, NotBoolean: true, Detail: detail}
	}
	e.root = root
	seen := map[int64]bool{}
	root.addFields(func(id int64) {
		if !seen[id] {
			seen[id] = true
			e.fields = append(e.fields, id)
		}
	})
	slices.Sort(e.fields)
	return e, nil
}

func withSrc(err error, src string) error {
	var e *Error
	if errors.As(err, &e) {
		e.Src = src
		return e
	}
	return &Error{Msg: err.Error(), Src: src}
}

// Eval returns one bool per row of b (true = the row matches). Comparisons
// on null are false and "is null" is true, with SQL three-valued logic for
// and/or/not. It fails only when the batch lacks a column the expression
// reads or holds one of an unexpected type.
func (e *Expr) Eval(b Batch) ([]bool, error) {
	n := b.Len()
	if e.root == nil {
		out := make([]bool, n)
		fill(out, true)
		return out, nil
	}
	v, err := e.root.eval(&evalCtx{b: b, n: n})
	if err != nil {
		return nil, err
	}
	return v.val, nil
}

// Fields returns the IDs of the fields the expression reads, ascending.
func (e *Expr) Fields() []int64 { return slices.Clone(e.fields) }

// MatchesAll reports whether the expression is empty or constant true.
func (e *Expr) MatchesAll() bool {
	if e.root == nil {
		return true
	}
	cp, ok := e.root.(*constPred)
	return ok && cp.v
}

// String gives a canonical, fully parenthesised form for logs and tests;
// the empty filter renders as "".
func (e *Expr) String() string {
	if e.root == nil {
		return ""
	}
	return e.root.String()
}

// Source returns the filter text Compile was given.
func (e *Expr) Source() string { return e.src }

// PKValues recognises "pk in [...]", "pk == v" and or-combinations of them,
// and returns the distinct key values in order of first appearance as a
// *column.Ints (Int64 pk) or *column.Strings (VarChar pk), so callers can
// look rows up by key instead of scanning. ok is false for any other shape.
func (e *Expr) PKValues() (column.Column, bool) {
	if e.root == nil || e.pk == nil {
		return nil, false
	}
	var vals []value
	var collect func(p pred) bool
	collect = func(p pred) bool {
		switch q := p.(type) {
		case *orPred:
			for _, r := range q.ps {
				if !collect(r) {
					return false
				}
			}
			return true
		case *cmpConstPred:
			if q.op != opEq || !e.isPK(q.x) {
				return false
			}
			vals = append(vals, q.k)
			return true
		case *inPred:
			if !e.isPK(q.x) {
				return false
			}
			vals = append(vals, q.vals...)
			return true
		}
		return false
	}
	if !collect(e.root) {
		return nil, false
	}
	switch e.pk.GetDataType() {
	case schemapb.DataType_Int64:
		out := &column.Ints{T: schemapb.DataType_Int64, Data: []int64{}}
		seen := map[int64]bool{}
		for _, v := range vals {
			n, ok := v.i, v.k == vkInt
			if v.k == vkFloat {
				n, ok = floatToInt(v.f)
			}
			if ok && !seen[n] {
				seen[n] = true
				out.Data = append(out.Data, n)
			}
		}
		return out, true
	case schemapb.DataType_VarChar:
		out := &column.Strings{T: schemapb.DataType_VarChar, Data: []string{}}
		seen := map[string]bool{}
		for _, v := range vals {
			if !seen[v.s] {
				seen[v.s] = true
				out.Data = append(out.Data, v.s)
			}
		}
		return out, true
	}
	return nil, false
}

func (e *Expr) isPK(v valNode) bool {
	cn, ok := v.(*colNode)
	return ok && cn.fid == e.pk.GetFieldID()
}
