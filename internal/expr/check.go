package expr

import (
	"math"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/strata-db/strata/internal/column"
)

// operand is the result of checking a syntax node: exactly one of its
// pointer fields is set.
type operand struct {
	pos  int
	c    *value    // a constant
	v    valNode   // a typed vector (scalar field, arithmetic, array element…)
	json *jsonRef  // a JSON path (or whole JSON field)
	arr  *arrayRef // a whole Array field
	p    pred      // a boolean expression
}

// checker resolves names against the schema and builds operators.
type checker struct {
	schema *schemapb.CollectionSchema
	byName map[string]*schemapb.FieldSchema
	dyn    *schemapb.FieldSchema
}

func newChecker(schema *schemapb.CollectionSchema) *checker {
	c := &checker{schema: schema, byName: map[string]*schemapb.FieldSchema{}}
	for _, f := range schema.GetFields() {
		c.byName[f.GetName()] = f
		if f.GetIsDynamic() && f.GetDataType() == schemapb.DataType_JSON && c.dyn == nil {
			c.dyn = f
		}
	}
	return c
}

// describe names an operand for error messages.
func describe(o operand) string {
	switch {
	case o.c != nil:
		if o.c.k == vkList {
			return "list " + o.c.String()
		}
		return o.c.k.String() + " " + o.c.String()
	case o.json != nil:
		return "JSON " + o.json.String()
	case o.arr != nil:
		return "Array field " + o.arr.name
	case o.p != nil:
		return "boolean expression"
	}
	if cn, ok := o.v.(*colNode); ok {
		return cn.dt.String() + " field " + cn.name
	}
	return o.v.typ().String() + " expression " + o.v.String()
}

// resolve turns a field reference into an operand.
func (c *checker) resolve(n *identNode) (operand, error) {
	o := operand{pos: n.pos}
	var f *schemapb.FieldSchema
	path := n.path
	if n.name == "$meta" {
		if c.dyn == nil {
			return o, errAt(n.pos, "$meta is not available: the collection has no dynamic field")
		}
		o.json = &jsonRef{fid: c.dyn.GetFieldID(), name: "$meta", path: path}
		return o, nil
	}
	f = c.byName[n.name]
	if f == nil {
		if c.dyn == nil {
			return o, errAt(n.pos, "field %s not exist", n.name)
		}
		p := append([]pathStep{{key: n.name, isKey: true, pos: n.pos}}, path...)
		o.json = &jsonRef{fid: c.dyn.GetFieldID(), name: "$meta", path: p}
		return o, nil
	}
	dt := f.GetDataType()
	name := f.GetName()
	if column.IsVector(dt) {
		return o, errAt(n.pos, "field %s is a vector field (%s) and cannot be used in a filter", name, dt)
	}
	switch dt {
	case schemapb.DataType_JSON:
		o.json = &jsonRef{fid: f.GetFieldID(), name: name, path: path}
		return o, nil
	case schemapb.DataType_Array:
		ar := &arrayRef{fid: f.GetFieldID(), name: name, elem: f.GetElementType()}
		if len(path) == 0 {
			o.arr = ar
			return o, nil
		}
		if len(path) > 1 || path[0].isKey {
			return o, errAt(path[0].pos, "Array field %s can only be indexed by one integer", name)
		}
		t, ok := elemType(ar.elem)
		if !ok {
			return o, errAt(n.pos, "Array field %s has unsupported element type %s", name, ar.elem)
		}
		o.v = &arrayElemNode{arr: ar, idx: path[0].index, t: t}
		return o, nil
	}
	if len(path) > 0 {
		return o, errAt(path[0].pos, "field %s of type %s cannot be indexed (only JSON and Array fields can)", name, dt)
	}
	cn := &colNode{fid: f.GetFieldID(), name: name, dt: dt}
	switch dt {
	case schemapb.DataType_Bool:
		cn.t = tyBool
	case schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32, schemapb.DataType_Int64,
		schemapb.DataType_Timestamptz:
		cn.t = tyInt
	case schemapb.DataType_Float, schemapb.DataType_Double:
		cn.t = tyFloat
	case schemapb.DataType_VarChar, schemapb.DataType_String:
		cn.t = tyString
	default:
		return o, errAt(n.pos, "field %s of type %s cannot be used in a filter", name, dt)
	}
	o.v = cn
	return o, nil
}

// check type-checks a node.
func (c *checker) check(n node) (operand, error) {
	switch n := n.(type) {
	case *litNode:
		v := n.v
		return operand{pos: n.pos, c: &v}, nil
	case *listNode:
		vals := make([]value, 0, len(n.elems))
		for _, e := range n.elems {
			o, err := c.check(e)
			if err != nil {
				return operand{}, err
			}
			if o.c == nil {
				return operand{}, errAt(e.position(), "list elements must be constants, got %s", describe(o))
			}
			vals = append(vals, *o.c)
		}
		v := listVal(vals)
		return operand{pos: n.pos, c: &v}, nil
	case *identNode:
		return c.resolve(n)
	case *unaryNode:
		return c.checkUnary(n)
	case *binaryNode:
		switch n.op {
		case tAnd, tOr:
			return c.checkLogical(n)
		case tEq, tNe, tLt, tLe, tGt, tGe:
			l, err := c.check(n.l)
			if err != nil {
				return operand{}, err
			}
			r, err := c.check(n.r)
			if err != nil {
				return operand{}, err
			}
			p, err := c.compare(n.pos, cmpFromTok(n.op), l, r)
			return operand{pos: n.pos, p: p}, err
		}
		return c.checkArith(n)
	case *rangeNode:
		return c.checkRange(n)
	case *inNode:
		return c.checkIn(n)
	case *likeNode:
		return c.checkLike(n)
	case *nullNode:
		return c.checkNull(n)
	case *existsNode:
		x, err := c.check(n.x)
		if err != nil {
			return operand{}, err
		}
		if x.json == nil || len(x.json.path) == 0 {
			return operand{}, errAt(n.pos, "exists needs a JSON path such as meta[\"key\"], got %s", describe(x))
		}
		return operand{pos: n.pos, p: &existsPred{ref: x.json}}, nil
	case *callNode:
		return c.checkCall(n)
	}
	return operand{}, errAt(n.position(), "unsupported expression")
}

// toPred turns an operand into a boolean operator.
func (c *checker) toPred(o operand) (pred, error) {
	switch {
	case o.p != nil:
		return o.p, nil
	case o.c != nil && o.c.k == vkBool:
		return &constPred{v: o.c.b}, nil
	case o.v != nil && o.v.typ() == tyBool:
		return &truthPred{x: o.v}, nil
	}
	return nil, errAt(o.pos, "expected a boolean expression, got %s", describe(o))
}

func (c *checker) checkLogical(n *binaryNode) (operand, error) {
	var ps []pred
	// Flatten left-deep chains of the same operator iteratively.
	var operands []node
	var cur node = n
	for {
		b, ok := cur.(*binaryNode)
		if !ok || b.op != n.op {
			operands = append(operands, cur)
			break
		}
		operands = append(operands, b.r)
		cur = b.l
	}
	for i := len(operands) - 1; i >= 0; i-- {
		o, err := c.check(operands[i])
		if err != nil {
			return operand{}, err
		}
		p, err := c.toPred(o)
		if err != nil {
			return operand{}, err
		}
		if cp, ok := p.(*constPred); ok {
			if cp.v == (n.op == tOr) {
				// true or x = true; false and x = false (x is still checked).
				ps = append(ps[:0], p)
				for j := i - 1; j >= 0; j-- {
					o, err := c.check(operands[j])
					if err != nil {
						return operand{}, err
					}
					if _, err := c.toPred(o); err != nil {
						return operand{}, err
					}
				}
				return operand{pos: n.pos, p: p}, nil
			}
			continue // the identity element
		}
		if n.op == tAnd {
			if a, ok := p.(*andPred); ok {
				ps = append(ps, a.ps...)
				continue
			}
		} else if a, ok := p.(*orPred); ok {
			ps = append(ps, a.ps...)
			continue
		}
		ps = append(ps, p)
	}
	switch {
	case len(ps) == 0:
		return operand{pos: n.pos, p: &constPred{v: n.op == tAnd}}, nil
	case len(ps) == 1:
		return operand{pos: n.pos, p: ps[0]}, nil
	case n.op == tAnd:
		return operand{pos: n.pos, p: &andPred{ps: ps}}, nil
	}
	return operand{pos: n.pos, p: &orPred{ps: ps}}, nil
}

func (c *checker) checkUnary(n *unaryNode) (operand, error) {
	x, err := c.check(n.x)
	if err != nil {
		return operand{}, err
	}
	if n.op == tNot {
		p, err := c.toPred(x)
		if err != nil {
			return operand{}, errAt(n.pos, "'not' needs a boolean operand, got %s", describe(x))
		}
		switch q := p.(type) {
		case *constPred:
			return operand{pos: n.pos, p: &constPred{v: !q.v}}, nil
		case *notPred:
			return operand{pos: n.pos, p: q.p}, nil
		}
		return operand{pos: n.pos, p: &notPred{p: p}}, nil
	}
	if n.op == tAdd || n.op == tSub {
		if x.c != nil {
			switch x.c.k {
			case vkInt:
				if n.op == tSub {
					return constOperand(n.pos, intVal(-x.c.i)), nil
				}
				return x, nil
			case vkFloat:
				if n.op == tSub {
					return constOperand(n.pos, floatVal(-x.c.f)), nil
				}
				return x, nil
			}
			return operand{}, errAt(n.pos, "unary %s needs a number, got %s", n.op, describe(x))
		}
		v, err := c.numeric(n.pos, n.op, x)
		if err != nil {
			return operand{}, err
		}
		if n.op == tAdd {
			return operand{pos: n.pos, v: v}, nil
		}
		return operand{pos: n.pos, v: &negNode{op: tSub, x: v}}, nil
	}
	// ~
	if x.c != nil {
		if x.c.k != vkInt {
			return operand{}, errAt(n.pos, "bitwise ~ needs an integer, got %s", describe(x))
		}
		return constOperand(n.pos, intVal(^x.c.i)), nil
	}
	v, err := c.numeric(n.pos, n.op, x)
	if err != nil {
		return operand{}, err
	}
	if v.typ() != tyInt {
		return operand{}, errAt(n.pos, "bitwise ~ needs an integer, got %s", describe(x))
	}
	return operand{pos: n.pos, v: &negNode{op: tBNot, x: v}}, nil
}

func constOperand(pos int, v value) operand { return operand{pos: pos, c: &v} }

// numeric converts an arithmetic operand into a numeric vector.
func (c *checker) numeric(pos int, op tokKind, o operand) (valNode, error) {
	switch {
	case o.c != nil:
		if !o.c.isNumber() {
			return nil, errAt(pos, "arithmetic operator %s is not supported on %s", op, describe(o))
		}
		return &constNode{v: *o.c}, nil
	case o.json != nil:
		return &jsonNumNode{ref: o.json}, nil
	case o.v != nil && o.v.typ().numeric():
		return o.v, nil
	}
	return nil, errAt(pos, "arithmetic operator %s is not supported on %s", op, describe(o))
}

func isBitwise(op tokKind) bool {
	return op == tBAnd || op == tBOr || op == tBXor || op == tShl || op == tShr
}

func (c *checker) checkArith(n *binaryNode) (operand, error) {
	l, err := c.check(n.l)
	if err != nil {
		return operand{}, err
	}
	r, err := c.check(n.r)
	if err != nil {
		return operand{}, err
	}
	if l.c != nil && r.c != nil {
		v, err := foldArith(n.pos, n.op, *l.c, *r.c, l, r)
		if err != nil {
			return operand{}, err
		}
		return constOperand(n.pos, v), nil
	}
	if r.c != nil && r.c.isNumber() && (n.op == tDiv || n.op == tMod) && r.c.asFloat() == 0 {
		return operand{}, errAt(n.pos, "division by zero")
	}
	if r.c != nil && r.c.k == vkInt && (n.op == tShl || n.op == tShr) && r.c.i < 0 {
		return operand{}, errAt(n.pos, "negative shift count %d", r.c.i)
	}
	lv, err := c.numeric(n.pos, n.op, l)
	if err != nil {
		return operand{}, err
	}
	rv, err := c.numeric(n.pos, n.op, r)
	if err != nil {
		return operand{}, err
	}
	if l.c == nil && r.c == nil {
		// Milvus's planner takes arithmetic with one constant operand only.
		return operand{}, errAt(n.pos, "arithmetic operator %s between %s and %s is not supported: one operand must be a constant",
			n.op, describe(l), describe(r))
	}
	t := tyFloat
	if lv.typ() == tyInt && rv.typ() == tyInt && n.op != tPow {
		t = tyInt
	}
	if isBitwise(n.op) && (lv.typ() != tyInt || rv.typ() != tyInt) {
		bad := l
		if lv.typ() == tyInt {
			bad = r
		}
		return operand{}, errAt(n.pos, "bitwise operator %s needs integer operands, got %s", n.op, describe(bad))
	}
	return operand{pos: n.pos, v: &arithNode{op: n.op, l: lv, r: rv, t: t}}, nil
}

// foldArith evaluates an operator on two constants.
func foldArith(pos int, op tokKind, a, b value, lo, ro operand) (value, error) {
	if !a.isNumber() {
		return value{}, errAt(pos, "arithmetic operator %s is not supported on %s", op, describe(lo))
	}
	if !b.isNumber() {
		return value{}, errAt(pos, "arithmetic operator %s is not supported on %s", op, describe(ro))
	}
	if a.k == vkInt && b.k == vkInt {
		x, y := a.i, b.i
		switch op {
		case tAdd:
			return intVal(x + y), nil
		case tSub:
			return intVal(x - y), nil
		case tMul:
			return intVal(x * y), nil
		case tDiv, tMod:
			if y == 0 {
				return value{}, errAt(pos, "division by zero")
			}
			if op == tDiv {
				return intVal(x / y), nil
			}
			return intVal(x % y), nil
		case tPow:
			if y < 0 {
				return floatVal(math.Pow(float64(x), float64(y))), nil
			}
			r := int64(1)
			for ; y > 0; y >>= 1 {
				if y&1 == 1 {
					r *= x
				}
				x *= x
			}
			return intVal(r), nil
		case tBAnd:
			return intVal(x & y), nil
		case tBOr:
			return intVal(x | y), nil
		case tBXor:
			return intVal(x ^ y), nil
		case tShl, tShr:
			v, ok := shiftInt(op, x, y)
			if !ok {
				return value{}, errAt(pos, "negative shift count %d", y)
			}
			return intVal(v), nil
		}
	}
	if isBitwise(op) {
		bad := lo
		if a.k == vkInt {
			bad = ro
		}
		return value{}, errAt(pos, "bitwise operator %s needs integer operands, got %s", op, describe(bad))
	}
	x, y := a.asFloat(), b.asFloat()
	switch op {
	case tAdd:
		return floatVal(x + y), nil
	case tSub:
		return floatVal(x - y), nil
	case tMul:
		return floatVal(x * y), nil
	case tDiv:
		if y == 0 {
			return value{}, errAt(pos, "division by zero")
		}
		return floatVal(x / y), nil
	case tMod:
		if y == 0 {
			return value{}, errAt(pos, "division by zero")
		}
		return floatVal(math.Mod(x, y)), nil
	}
	return floatVal(math.Pow(x, y)), nil
}

// compareConst folds a comparison of two constants.
func compareConst(pos int, op cmpOp, a, b value) (bool, error) {
	switch {
	case a.isNumber() && b.isNumber():
		if a.k == vkInt && b.k == vkInt {
			return op.holds(cmp3(a.i, b.i)), nil
		}
		return op.holds(cmpFloat3(a.asFloat(), b.asFloat())), nil
	case a.k == vkString && b.k == vkString:
		return op.holds(strings.Compare(a.s, b.s)), nil
	case a.k == vkBool && b.k == vkBool && (op == opEq || op == opNe):
		return (a.b == b.b) == (op == opEq), nil
	}
	return false, errAt(pos, "cannot compare %s with %s using %s", a.k, b.k, op)
}

// compare builds l op r.
func (c *checker) compare(pos int, op cmpOp, l, r operand) (pred, error) {
	if l.p != nil || r.p != nil {
		return nil, errAt(pos, "cannot compare a boolean expression with %s; use and/or/not", op)
	}
	if l.c != nil && r.c != nil {
		ok, err := compareConst(pos, op, *l.c, *r.c)
		if err != nil {
			return nil, err
		}
		return &constPred{v: ok}, nil
	}
	if l.c != nil {
		l, r, op = r, l, op.flip()
	}
	bad := func() error {
		return errAt(pos, "comparisons between %s and %s are not supported", milvusType(l), milvusType(r)).
			detailed("%s with %s", describe(l), describe(r))
	}
	switch {
	case l.arr != nil && r.c != nil && r.c.k == vkList && (op == opEq || op == opNe):
		want, err := newArrayContains(l.arr, containsAll, *r.c, r.c.l, pos)
		if err != nil {
			return nil, err
		}
		return &arrayEqPred{want: want, ne: op == opNe}, nil
	case l.arr != nil || r.arr != nil:
		return nil, errAt(pos, "cannot compare %s with %s: use array_contains or index an element such as %s[0]",
			describe(l), describe(r), arrName(l, r))
	case l.json != nil && r.c != nil:
		k := *r.c
		switch {
		case k.k == vkList && (op == opEq || op == opNe):
			return &jsonListEqPred{ref: l.json, want: k, ne: op == opNe}, nil
		case k.k == vkList:
			return nil, bad()
		case k.k == vkBool && op != opEq && op != opNe:
			return nil, errAt(pos, "operator %s is not supported on bool %s", op, k.String())
		}
		return &jsonCmpPred{ref: l.json, op: op, k: k, kb: []byte(k.s)}, nil
	case l.json != nil || r.json != nil:
		// As in Milvus, a JSON value (a JSON field's path or a dynamic
		// key) is compared with constants only.
		return nil, errAt(pos, "two column comparison with JSON type is not supported").detailed("%s with %s", describe(l), describe(r))
	case r.c != nil:
		k := *r.c
		t := l.v.typ()
		switch {
		case t.numeric() && k.isNumber():
			if t == tyFloat && k.k == vkInt {
				k = floatVal(float64(k.i))
			}
			if isFloat32(l.v) {
				k.f = roundFloat32(k.f)
			}
		case t == tyString && k.k == vkString:
		case t == tyBool && k.k == vkBool:
			if op != opEq && op != opNe {
				return nil, errAt(pos, "operator %s is not supported on %s", op, describe(l))
			}
		default:
			return nil, bad()
		}
		return &cmpConstPred{x: l.v, op: op, k: k}, nil
	}
	lt, rt := l.v.typ(), r.v.typ()
	switch {
	case lt.numeric() && rt.numeric(), lt == tyString && rt == tyString:
	case lt == tyBool && rt == tyBool:
		if op != opEq && op != opNe {
			return nil, errAt(pos, "operator %s is not supported on %s", op, describe(l))
		}
	default:
		return nil, bad()
	}
	return &cmpPred{l: l.v, r: r.v, op: op}, nil
}

func arrName(l, r operand) string {
	if l.arr != nil {
		return l.arr.name
	}
	return r.arr.name
}

// isFloat32 reports whether v reads a Float (32-bit) field.
func isFloat32(v valNode) bool {
	switch n := v.(type) {
	case *colNode:
		return n.dt == schemapb.DataType_Float
	case *arrayElemNode:
		return n.arr.elem == schemapb.DataType_Float
	}
	return false
}

func (c *checker) checkRange(n *rangeNode) (operand, error) {
	lo, err := c.check(n.lo)
	if err != nil {
		return operand{}, err
	}
	x, err := c.check(n.x)
	if err != nil {
		return operand{}, err
	}
	hi, err := c.check(n.hi)
	if err != nil {
		return operand{}, err
	}
	p1, err := c.compare(n.pos1, cmpFromTok(n.op1), lo, x)
	if err != nil {
		return operand{}, err
	}
	p2, err := c.compare(n.pos2, cmpFromTok(n.op2), x, hi)
	if err != nil {
		return operand{}, err
	}
	return operand{pos: n.pos, p: &andPred{ps: []pred{p1, p2}}}, nil
}

// listOf checks that o is a constant list.
func listOf(o operand, what string) ([]value, error) {
	if o.c == nil || o.c.k != vkList {
		return nil, errAt(o.pos, "%s expects a list such as [1, 2], got %s", what, describe(o))
	}
	return o.c.l, nil
}

func (c *checker) checkIn(n *inNode) (operand, error) {
	x, err := c.check(n.x)
	if err != nil {
		return operand{}, err
	}
	lo, err := c.check(n.list)
	if err != nil {
		return operand{}, err
	}
	vals, err := listOf(lo, "'in'")
	if err != nil {
		return operand{}, err
	}
	var p pred
	switch {
	case x.json != nil:
		p = newJSONInPred(x.json, vals)
	case x.v != nil:
		p, err = newInPred(x, vals, lo.pos)
		if err != nil {
			return operand{}, err
		}
	case x.c != nil:
		hit := false
		for _, v := range vals {
			if equalValues(*x.c, v) {
				hit = true
			}
		}
		p = &constPred{v: hit}
	default:
		return operand{}, errAt(n.pos, "'in' is not supported on %s", describe(x))
	}
	if n.not {
		p = &notPred{p: p}
	}
	return operand{pos: n.pos, p: p}, nil
}

// newInPred converts the list to x's type and builds the lookup set.
func newInPred(x operand, vals []value, pos int) (*inPred, error) {
	t := x.v.typ()
	p := &inPred{x: x.v}
	var ints []int64
	for _, v := range vals {
		ok := false
		switch t {
		case tyInt:
			if ok = v.isNumber(); ok {
				p.vals = append(p.vals, v)
				if v.k == vkInt {
					ints = append(ints, v.i)
				} else if n, exact := floatToInt(v.f); exact {
					ints = append(ints, n)
				}
			}
		case tyFloat:
			if ok = v.isNumber(); ok {
				if p.flts == nil {
					p.flts = map[float64]struct{}{}
				}
				f := v.asFloat()
				if isFloat32(x.v) {
					f = roundFloat32(f)
				}
				p.flts[f] = struct{}{}
				p.vals = append(p.vals, v)
			}
		case tyString:
			if ok = v.k == vkString; ok {
				if p.strs == nil {
					p.strs = map[string]struct{}{}
				}
				p.strs[v.s] = struct{}{}
				p.vals = append(p.vals, v)
			}
		case tyBool:
			if ok = v.k == vkBool; ok {
				if v.b {
					p.bools[1] = true
				} else {
					p.bools[0] = true
				}
				p.vals = append(p.vals, v)
			}
		}
		if !ok {
			return nil, errAt(pos, "list element %s does not match %s", describeVal(v), describe(x))
		}
	}
	if t == tyInt {
		p.ints = newIntSet(ints)
	}
	return p, nil
}

func describeVal(v value) string { return v.k.String() + " " + v.String() }

func (c *checker) checkLike(n *likeNode) (operand, error) {
	x, err := c.check(n.x)
	if err != nil {
		return operand{}, err
	}
	po, err := c.check(n.pat)
	if err != nil {
		return operand{}, err
	}
	if po.c == nil || po.c.k != vkString {
		return operand{}, errAt(po.pos, "like needs a string pattern, got %s", describe(po))
	}
	m, err := newMatcher(po.c.s)
	if err != nil {
		return operand{}, errAt(po.pos, "invalid like pattern: %v", err)
	}
	var p pred
	switch {
	case x.json != nil:
		p = &jsonLikePred{ref: x.json, m: m}
	case x.v != nil && x.v.typ() == tyString:
		p = &likePred{x: x.v, m: m}
	case x.c != nil && x.c.k == vkString:
		p = &constPred{v: m.match(x.c.s)}
	default:
		return operand{}, errAt(n.pos, "like operation on non-string or no-json field is unsupported").detailed("got %s", describe(x))
	}
	if n.not {
		p = &notPred{p: p}
	}
	return operand{pos: n.pos, p: p}, nil
}

func (c *checker) checkNull(n *nullNode) (operand, error) {
	if id, ok := n.x.(*identNode); ok && len(id.path) == 0 {
		if f := c.byName[id.name]; f != nil && column.IsVector(f.GetDataType()) {
			return operand{}, errAt(id.pos, "IsNull/IsNotNull operations are not supported on vector fields").
				detailed("field %s is %s", id.name, f.GetDataType())
		}
	}
	if f := c.geoField(n.x); f != nil {
		return operand{pos: n.pos, p: &geoNullPred{fid: f.GetFieldID(), name: f.GetName(), not: n.not}}, nil
	}
	if lit, ok := n.x.(*litNode); ok && lit.v.k == vkNull {
		// "null is null" is true, "null is not null" false (Milvus accepts both).
		return operand{pos: n.pos, p: &constPred{v: !n.not}}, nil
	}
	x, err := c.check(n.x)
	if err != nil {
		return operand{}, err
	}
	p := &nullPred{not: n.not}
	switch {
	case x.json != nil:
		p.json = x.json
	case x.arr != nil:
		p.arr = x.arr
	case x.v != nil:
		switch x.v.(type) {
		case *colNode:
		case *arrayElemNode:
			return operand{}, errAt(n.pos, "IsNull/IsNotNull operations are not supported on array element access")
		default:
			return operand{}, errAt(n.pos, "is null applies to a field, got %s", describe(x))
		}
		p.x = x.v
	default:
		return operand{}, errAt(n.pos, "is null applies to a field, got %s", describe(x))
	}
	return operand{pos: n.pos, p: p}, nil
}

// knownFunction reports whether name (lower case) is a supported function.
func knownFunction(name string) bool {
	switch name {
	case "array_contains", "array_contains_all", "array_contains_any",
		"json_contains", "json_contains_all", "json_contains_any", "array_length":
		return true
	}
	return false
}

// unsupportedFunction reports Milvus functions Strata parses but does not run.
func unsupportedFunction(name string) bool {
	switch name {
	case "random_sample", "element_filter",
		"match_all", "match_any", "match_least", "match_most", "match_exact":
		return true
	}
	return false
}

func (c *checker) checkCall(n *callNode) (operand, error) {
	if op, ok := spatialNames[n.name]; ok {
		return c.checkSpatial(n, op)
	}
	if n.name == "text_match" || n.name == "phrase_match" {
		return c.checkTextMatch(n)
	}
	if unsupportedFunction(n.name) {
		return operand{}, errAt(n.pos, "function %s is not supported", n.name)
	}
	if !knownFunction(n.name) {
		e := errAt(n.pos, "unknown function %s", n.name)
		e.UnknownFunction = true
		return operand{}, e
	}
	want := 2
	if n.name == "array_length" {
		want = 1
	}
	if len(n.args) != want {
		return operand{}, errAt(n.pos, "function %s takes %d argument(s), got %d", n.name, want, len(n.args))
	}
	args := make([]operand, len(n.args))
	for i, a := range n.args {
		o, err := c.check(a)
		if err != nil {
			return operand{}, err
		}
		args[i] = o
	}
	f := args[0]
	if n.name == "array_length" {
		switch {
		case f.arr != nil:
			return operand{pos: n.pos, v: &arrayLenNode{arr: f.arr}}, nil
		case f.json != nil:
			return operand{pos: n.pos, v: &arrayLenNode{json: f.json}}, nil
		}
		return operand{}, errAt(f.pos, "array_length needs an Array field or a JSON path, got %s", describe(f))
	}
	mode := containsOne
	switch {
	case strings.HasSuffix(n.name, "_all"):
		mode = containsAll
	case strings.HasSuffix(n.name, "_any"):
		mode = containsAny
	}
	arg := args[1]
	if arg.c == nil {
		return operand{}, errAt(arg.pos, "%s needs a constant second argument, got %s", n.name, describe(arg))
	}
	var want1 []value
	if mode == containsOne {
		want1 = []value{*arg.c}
	} else {
		l, err := listOf(arg, n.name)
		if err != nil {
			return operand{}, err
		}
		want1 = l
	}
	switch {
	case f.json != nil:
		return operand{pos: n.pos, p: &jsonContainsPred{ref: f.json, mode: mode, arg: *arg.c, want: want1}}, nil
	case f.arr != nil:
		p, err := newArrayContains(f.arr, mode, *arg.c, want1, arg.pos)
		if err != nil {
			return operand{}, err
		}
		return operand{pos: n.pos, p: p}, nil
	}
	return operand{}, errAt(f.pos, "%s needs an Array field or a JSON path, got %s", n.name, describe(f))
}

func newArrayContains(ar *arrayRef, mode containsMode, arg value, want []value, pos int) (*arrayContainsPred, error) {
	p := &arrayContainsPred{arr: ar, mode: mode, arg: arg}
	t, ok := elemType(ar.elem)
	if !ok {
		return nil, errAt(pos, "Array field %s has unsupported element type %s", ar.name, ar.elem)
	}
	for _, v := range want {
		ok := false
		switch t {
		case tyInt:
			if ok = v.isNumber(); ok {
				if v.k == vkInt {
					p.ints = append(p.ints, v.i)
				} else if n, exact := floatToInt(v.f); exact {
					p.ints = append(p.ints, n)
				} else {
					p.impossible = true
				}
			}
		case tyFloat:
			if ok = v.isNumber(); ok {
				f := v.asFloat()
				if ar.elem == schemapb.DataType_Float {
					f = roundFloat32(f)
				}
				p.flts = append(p.flts, f)
			}
		case tyString:
			if ok = v.k == vkString; ok {
				p.strs = append(p.strs, v.s)
			}
		case tyBool:
			if ok = v.k == vkBool; ok {
				p.bools = append(p.bools, v.b)
			}
		}
		if !ok {
			return nil, errAt(pos, "%s does not match the element type %s of Array field %s", describeVal(v), ar.elem, ar.name)
		}
	}
	return p, nil
}
