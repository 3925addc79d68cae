package expr

import (
	"strconv"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
)

// maxDepth bounds the nesting of the recursive-descent parser.
const maxDepth = 256

// node is an untyped syntax tree node.
type node interface{ position() int }

type (
	// litNode is a literal or template constant (possibly a list).
	litNode struct {
		pos int
		v   value
	}
	// listNode is a bracketed list whose elements are checked to be constants.
	listNode struct {
		pos   int
		elems []node
	}
	// identNode is a field reference with optional [key] / [index] steps.
	identNode struct {
		pos  int
		name string // "$meta" for the dynamic field
		path []pathStep
	}
	// unaryNode is -x, +x, ~x or not x.
	unaryNode struct {
		pos int
		op  tokKind
		x   node
	}
	// binaryNode is an arithmetic, bitwise, comparison or logical operator.
	binaryNode struct {
		pos  int
		op   tokKind
		l, r node
	}
	// rangeNode is a chained comparison lo op1 x op2 hi.
	rangeNode struct {
		pos        int
		op1, op2   tokKind
		lo, x, hi  node
		pos1, pos2 int
	}
	// inNode is x [not] in list.
	inNode struct {
		pos  int
		not  bool
		x    node
		list node
	}
	// likeNode is x [not] like pattern.
	likeNode struct {
		pos int
		not bool
		x   node
		pat node
	}
	// nullNode is x is [not] null.
	nullNode struct {
		pos int
		not bool
		x   node
	}
	// existsNode is exists x.
	existsNode struct {
		pos int
		x   node
	}
	// callNode is name(args...).
	callNode struct {
		pos  int
		name string
		args []node
	}
)

// pathStep is one JSON key or array index.
type pathStep struct {
	key   string
	index int64
	isKey bool
	pos   int
}

func (n *litNode) position() int    { return n.pos }
func (n *listNode) position() int   { return n.pos }
func (n *identNode) position() int  { return n.pos }
func (n *unaryNode) position() int  { return n.pos }
func (n *binaryNode) position() int { return n.pos }
func (n *rangeNode) position() int  { return n.pos }
func (n *inNode) position() int     { return n.pos }
func (n *likeNode) position() int   { return n.pos }
func (n *nullNode) position() int   { return n.pos }
func (n *existsNode) position() int { return n.pos }
func (n *callNode) position() int   { return n.pos }

// parser is a precedence-climbing parser over the token slice.
type parser struct {
	toks      []token
	i         int
	depth     int
	templates map[string]*schemapb.TemplateValue
	// tz is the time zone of ISO literals without an offset ("" = UTC).
	tz string
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) peekAt(k int) token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) expect(k tokKind) (token, error) {
	t := p.peek()
	if t.kind != k {
		return t, p.unexpected(t, "expected "+quoteTok(k))
	}
	return p.next(), nil
}

func quoteTok(k tokKind) string {
	if k == tEOF || k == tInt || k == tFloat || k == tString || k == tIdent {
		return k.String()
	}
	return "'" + k.String() + "'"
}

func (p *parser) unexpected(t token, want string) *Error {
	what := "end of expression"
	if t.kind != tEOF {
		what = strconv.Quote(t.text)
	}
	if want != "" {
		return errAt(t.pos, "unexpected %s, %s", what, want)
	}
	return errAt(t.pos, "unexpected %s", what)
}

func (p *parser) enter(pos int) error {
	p.depth++
	if p.depth > maxDepth {
		return errAt(pos, "expression is nested too deeply")
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// parse parses a whole expression.
func (p *parser) parse() (node, error) {
	n, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, p.unexpected(t, "expected an operator or end of expression")
	}
	return n, nil
}

func (p *parser) parseOr() (node, error) {
	l, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for p.peek().kind == tOr {
		t := p.next()
		r, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		l = &binaryNode{pos: t.pos, op: tOr, l: l, r: r}
	}
	return l, nil
}

func (p *parser) parseAnd() (node, error) {
	l, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	for p.peek().kind == tAnd {
		t := p.next()
		r, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		l = &binaryNode{pos: t.pos, op: tAnd, l: l, r: r}
	}
	return l, nil
}

// parseNot handles the logical prefix not / NOT / !, which binds looser
// than comparisons: "not a > 1" is "not (a > 1)".
func (p *parser) parseNot() (node, error) {
	if t := p.peek(); t.kind == tNot {
		p.next()
		if err := p.enter(t.pos); err != nil {
			return nil, err
		}
		defer p.leave()
		x, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		return &unaryNode{pos: t.pos, op: tNot, x: x}, nil
	}
	return p.parseBinary(0)
}

// binary precedence levels, loosest first, for the left-associative
// operators between not and the term level.
func binLevel(level int) []tokKind {
	switch level {
	case 0:
		return []tokKind{tBOr}
	case 1:
		return []tokKind{tBXor}
	case 2:
		return []tokKind{tBAnd}
	}
	return []tokKind{tEq, tNe}
}

const numBinLevels = 4

func (p *parser) parseBinary(level int) (node, error) {
	if level == numBinLevels {
		return p.parseRelational()
	}
	l, err := p.parseBinary(level + 1)
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if !hasKind(binLevel(level), t.kind) {
			return l, nil
		}
		p.next()
		r, err := p.parseBinary(level + 1)
		if err != nil {
			return nil, err
		}
		l = &binaryNode{pos: t.pos, op: t.kind, l: l, r: r}
	}
}

func hasKind(ks []tokKind, k tokKind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

func isRel(k tokKind) bool { return k == tLt || k == tLe || k == tGt || k == tGe }

// parseRelational parses a < b and the chained form lo < x <= hi.
func (p *parser) parseRelational() (node, error) {
	l, err := p.parseTerm()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	if !isRel(t.kind) {
		return l, nil
	}
	p.next()
	m, err := p.parseTerm()
	if err != nil {
		return nil, err
	}
	t2 := p.peek()
	if !isRel(t2.kind) {
		return &binaryNode{pos: t.pos, op: t.kind, l: l, r: m}, nil
	}
	p.next()
	up := func(k tokKind) bool { return k == tLt || k == tLe }
	if up(t.kind) != up(t2.kind) {
		return nil, errAt(t2.pos, "chained comparison must use operators of the same direction, got %s and %s", t.kind, t2.kind)
	}
	r, err := p.parseTerm()
	if err != nil {
		return nil, err
	}
	if t3 := p.peek(); isRel(t3.kind) {
		return nil, errAt(t3.pos, "a chained comparison takes at most two operators")
	}
	return &rangeNode{pos: l.position(), op1: t.kind, op2: t2.kind, lo: l, x: m, hi: r, pos1: t.pos, pos2: t2.pos}, nil
}

// parseTerm parses the postfix forms: [not] in, [not] like, is [not] null.
func (p *parser) parseTerm() (node, error) {
	x, err := p.parseShift()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	switch t.kind {
	case tIn:
		p.next()
		l, err := p.parseShift()
		if err != nil {
			return nil, err
		}
		return &inNode{pos: t.pos, x: x, list: l}, nil
	case tLike:
		p.next()
		pat, err := p.parseShift()
		if err != nil {
			return nil, err
		}
		return &likeNode{pos: t.pos, x: x, pat: pat}, nil
	case tNot:
		nx := p.peekAt(1)
		switch nx.kind {
		case tIn:
			p.next()
			p.next()
			l, err := p.parseShift()
			if err != nil {
				return nil, err
			}
			return &inNode{pos: t.pos, not: true, x: x, list: l}, nil
		case tLike:
			p.next()
			p.next()
			pat, err := p.parseShift()
			if err != nil {
				return nil, err
			}
			return &likeNode{pos: t.pos, not: true, x: x, pat: pat}, nil
		}
		return nil, p.unexpected(t, "expected 'in' or 'like' after 'not'")
	case tIs:
		p.next()
		not := false
		if p.peek().kind == tNot {
			p.next()
			not = true
		}
		if _, err := p.expect(tNull); err != nil {
			return nil, err
		}
		return &nullNode{pos: t.pos, not: not, x: x}, nil
	}
	return x, nil
}

func (p *parser) parseShift() (node, error) {
	return p.parseLeft(p.parseAdditive, tShl, tShr)
}

func (p *parser) parseAdditive() (node, error) {
	return p.parseLeft(p.parseMultiplicative, tAdd, tSub)
}

func (p *parser) parseMultiplicative() (node, error) {
	return p.parseLeft(p.parseUnary, tMul, tDiv, tMod)
}

func (p *parser) parseLeft(sub func() (node, error), ops ...tokKind) (node, error) {
	l, err := sub()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if !hasKind(ops, t.kind) {
			return l, nil
		}
		p.next()
		r, err := sub()
		if err != nil {
			return nil, err
		}
		l = &binaryNode{pos: t.pos, op: t.kind, l: l, r: r}
	}
}

// parseUnary parses - + ~ and the logical not in operand position; the
// operand may be a power expression, so -2 ** 2 is -(2 ** 2).
func (p *parser) parseUnary() (node, error) {
	t := p.peek()
	switch t.kind {
	case tSub, tAdd, tBNot, tNot:
		p.next()
		if err := p.enter(t.pos); err != nil {
			return nil, err
		}
		defer p.leave()
		// A negative integer literal is folded here so that the most
		// negative int64 is representable.
		if t.kind == tSub && p.peek().kind == tInt && p.peekAt(1).kind != tPow && p.peekAt(1).kind != tLBrack {
			lt := p.next()
			v, err := parseIntLit("-" + lt.text)
			if err != nil {
				return nil, errAt(lt.pos, "integer literal %s out of range", "-"+lt.text)
			}
			return &litNode{pos: t.pos, v: intVal(v)}, nil
		}
		x, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		return &unaryNode{pos: t.pos, op: t.kind, x: x}, nil
	}
	return p.parsePower()
}

// parsePower parses the right-associative ** operator.
func (p *parser) parsePower() (node, error) {
	base, err := p.parsePostfix()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	if t.kind != tPow {
		return base, nil
	}
	p.next()
	if err := p.enter(t.pos); err != nil {
		return nil, err
	}
	defer p.leave()
	exp, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	return &binaryNode{pos: t.pos, op: tPow, l: base, r: exp}, nil
}

// parsePostfix parses a primary followed by [key] / [index] steps.
func (p *parser) parsePostfix() (node, error) {
	x, err := p.parsePrimary()
	if err != nil {
		return nil, err
	}
	for p.peek().kind == tLBrack {
		id, ok := x.(*identNode)
		if !ok {
			return nil, errAt(p.peek().pos, "only a field can be indexed")
		}
		p.next()
		t := p.next()
		step := pathStep{pos: t.pos}
		switch t.kind {
		case tString:
			step.key, step.isKey = t.str, true
		case tInt:
			v, err := parseIntLit(t.text)
			if err != nil || v < 0 {
				return nil, errAt(t.pos, "invalid index %s", t.text)
			}
			step.index = v
		default:
			return nil, p.unexpected(t, "expected a string key or an integer index")
		}
		if _, err := p.expect(tRBrack); err != nil {
			return nil, err
		}
		id.path = append(id.path, step)
	}
	return x, nil
}

func (p *parser) parsePrimary() (node, error) {
	t := p.next()
	switch t.kind {
	case tInt:
		v, err := parseIntLit(t.text)
		if err != nil {
			return nil, errAt(t.pos, "integer literal %s out of range", t.text)
		}
		return &litNode{pos: t.pos, v: intVal(v)}, nil
	case tFloat:
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			return nil, errAt(t.pos, "float literal %s out of range", t.text)
		}
		return &litNode{pos: t.pos, v: floatVal(f)}, nil
	case tString:
		return &litNode{pos: t.pos, v: strVal(t.str)}, nil
	case tNull:
		return &litNode{pos: t.pos, v: value{k: vkNull}}, nil
	case tTrue:
		return &litNode{pos: t.pos, v: boolVal(true)}, nil
	case tFalse:
		return &litNode{pos: t.pos, v: boolVal(false)}, nil
	case tMeta:
		return &identNode{pos: t.pos, name: "$meta"}, nil
	case tIdent:
		if n, ok, err := p.timeLiteral(t); ok {
			return n, err
		}
		if p.peek().kind == tLParen {
			return p.parseCall(t)
		}
		return &identNode{pos: t.pos, name: t.text}, nil
	case tLBrace:
		name, err := p.expect(tIdent)
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(tRBrace); err != nil {
			return nil, err
		}
		tv, ok := p.templates[name.text]
		if !ok {
			return nil, errAt(t.pos, "template variable {%s} has no value", name.text)
		}
		v, ok := templateValue(tv)
		if !ok {
			return nil, errAt(t.pos, "template variable {%s} has an unsupported value", name.text)
		}
		return &litNode{pos: t.pos, v: v}, nil
	case tLParen:
		if err := p.enter(t.pos); err != nil {
			return nil, err
		}
		defer p.leave()
		x, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(tRParen); err != nil {
			return nil, err
		}
		return x, nil
	case tLBrack:
		if err := p.enter(t.pos); err != nil {
			return nil, err
		}
		defer p.leave()
		l := &listNode{pos: t.pos}
		for p.peek().kind != tRBrack {
			e, err := p.parseOr()
			if err != nil {
				return nil, err
			}
			l.elems = append(l.elems, e)
			if p.peek().kind != tComma {
				break
			}
			p.next()
		}
		if _, err := p.expect(tRBrack); err != nil {
			return nil, err
		}
		return l, nil
	case tExists:
		if err := p.enter(t.pos); err != nil {
			return nil, err
		}
		defer p.leave()
		x, err := p.parsePostfix()
		if err != nil {
			return nil, err
		}
		return &existsNode{pos: t.pos, x: x}, nil
	}
	return nil, p.unexpected(t, "expected a value, a field or '('")
}

func (p *parser) parseCall(name token) (node, error) {
	if err := p.enter(name.pos); err != nil {
		return nil, err
	}
	defer p.leave()
	p.next() // (
	c := &callNode{pos: name.pos, name: strings.ToLower(name.text)}
	if name.text != c.name && name.text != strings.ToUpper(name.text) {
		c.name = name.text // mixed case is not a known spelling
	}
	for p.peek().kind != tRParen {
		parse := p.parseOr
		if p.peek().kind == tIdent && p.peekAt(1).kind == tAssign {
			parse = p.parseNamedArg
		}
		a, err := parse()
		if err != nil {
			return nil, err
		}
		c.args = append(c.args, a)
		if p.peek().kind != tComma {
			break
		}
		p.next()
	}
	if _, err := p.expect(tRParen); err != nil {
		return nil, err
	}
	return c, nil
}
