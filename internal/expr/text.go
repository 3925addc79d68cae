package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/analyzer"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/textindex"
)

// MemoBatch is a Batch that keeps state derived from its rows between
// evaluations (a segment keeps its text indexes this way). Memo returns the
// value stored under key, calling build to create it the first time; it
// must be safe for concurrent use.
type MemoBatch interface {
	Batch
	Memo(key any, build func() any) any
}

// textIndexKey keys a field's text index in a MemoBatch.
type textIndexKey struct{ fid int64 }

// maxMinimumShouldMatch is Milvus's bound on text_match's minimum_should_match.
const maxMinimumShouldMatch = 1000

// namedArgNode is name = x inside a call's argument list.
type namedArgNode struct {
	pos  int
	name string
	x    node
}

func (n *namedArgNode) position() int { return n.pos }

// parseNamedArg parses "name = expr" (the caller saw the identifier and =).
func (p *parser) parseNamedArg() (node, error) {
	name := p.next()
	p.next() // =
	x, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	return &namedArgNode{pos: name.pos, name: strings.ToLower(name.text), x: x}, nil
}

// namedArgPosition reports whether an = just after toks would name a call
// argument: it follows ", ident" (minimum_should_match is never the first
// argument).
func namedArgPosition(toks []token) bool {
	n := len(toks)
	if n < 2 || toks[n-1].kind != tIdent || toks[n-2].kind != tComma {
		return false
	}
	switch toks[n-1].text {
	case "minimum_should_match", "MINIMUM_SHOULD_MATCH":
		return true
	}
	return false
}

// matchEnabled reports whether f has enable_match set.
func matchEnabled(f *schemapb.FieldSchema) bool {
	for _, kv := range f.GetTypeParams() {
		if kv.GetKey() == "enable_match" {
			return strings.EqualFold(kv.GetValue(), "true")
		}
	}
	return false
}

// checkTextMatch checks text_match(field, 'terms'[, minimum_should_match=k])
// and phrase_match(field, 'phrase'[, slop]) and returns their predicate.
func (c *checker) checkTextMatch(n *callNode) (operand, error) {
	phrase := n.name == "phrase_match"
	kind, option := "text match", "minimum_should_match=k"
	if phrase {
		kind, option = "phrase match", "slop"
	}
	if len(n.args) < 2 || len(n.args) > 3 {
		return operand{}, errAt(n.pos, "%s takes 2 or 3 arguments (field, query[, %s]), got %d", n.name, option, len(n.args))
	}
	id, ok := n.args[0].(*identNode)
	if !ok || len(id.path) > 0 {
		return operand{}, errAt(n.args[0].position(), "%s operation on non-string is unsupported", kind).detailed("the first argument of %s must be a VarChar field", n.name)
	}
	fo, err := c.resolve(id)
	if err != nil {
		return operand{}, err
	}
	cn, ok := fo.v.(*colNode)
	if !ok || cn.t != tyString {
		return operand{}, errAt(id.pos, "%s operation on non-string is unsupported", kind).detailed("got %s", describe(fo))
	}
	f := c.byName[cn.name]
	if !matchEnabled(f) {
		return operand{}, errAt(id.pos, "field %q does not enable match: invalid parameter", cn.name)
	}
	qo, err := c.check(n.args[1])
	if err != nil {
		return operand{}, err
	}
	if qo.c == nil || qo.c.k != vkString {
		return operand{}, errAt(qo.pos, "%s needs a string query as its second argument, got %s", n.name, describe(qo))
	}
	an, err := analyzer.ForField(c.schema, f)
	if err != nil {
		return operand{}, errAt(id.pos, "field %q: %v", cn.name, err)
	}
	p := &textPred{fid: cn.fid, name: cn.name, an: an, phrase: phrase, query: qo.c.s, minMatch: 1}
	if by := an.ByField(); by != "" {
		lf := c.byName[by]
		if lf == nil {
			return operand{}, errAt(id.pos, "field %q: its analyzer is chosen by field %q, which does not exist", cn.name, by)
		}
		p.langFid, p.langName = lf.GetFieldID(), lf.GetName()
	}
	toks := an.Analyze(p.query, "")
	if phrase {
		for _, t := range toks {
			p.tokens = append(p.tokens, textindex.QueryToken{Text: t.Text, Position: t.Position})
		}
	} else {
		for _, t := range toks {
			p.terms = append(p.terms, t.Text)
		}
	}
	if len(n.args) == 3 {
		if err := c.textMatchOption(p, n.args[2]); err != nil {
			return operand{}, err
		}
	}
	return operand{pos: n.pos, p: p}, nil
}

// textMatchOption checks the third argument: minimum_should_match=k for
// text_match, the slop for phrase_match.
func (c *checker) textMatchOption(p *textPred, a node) error {
	na, named := a.(*namedArgNode)
	if !p.phrase {
		if !named {
			return errAt(a.position(), "the third argument of text_match must be minimum_should_match=k")
		}
		o, err := c.check(na.x)
		if err != nil {
			return err
		}
		if o.c == nil || o.c.k != vkInt {
			return errAt(o.pos, "minimum_should_match should be a const integer expression: invalid parameter")
		}
		k := o.c.i
		if k < 1 {
			return errAt(o.pos, "minimum_should_match should be >= 1, got %d: invalid parameter", k)
		}
		if k > maxMinimumShouldMatch {
			return errAt(o.pos, "minimum_should_match should be <= %d, got %d: invalid parameter", maxMinimumShouldMatch, k)
		}
		p.minMatch = int(k)
		return nil
	}
	if named {
		return errAt(a.position(), "phrase_match takes no named argument %s", na.name)
	}
	o, err := c.check(a)
	if err != nil {
		return err
	}
	if o.c == nil || o.c.k != vkInt {
		return errAt(o.pos, "\"slop\" should be a const integer expression with \"uint32\" value. \"slop\" expression passed: %s: invalid parameter", slopText(o))
	}
	s := o.c.i
	if s < 0 {
		return errAt(o.pos, "\"slop\" should not be a negative interger. \"slop\" passed: %d: invalid parameter", s)
	}
	if s > math.MaxUint32 {
		return errAt(o.pos, "\"slop\" exceeds the range of \"uint32\". \"slop\" expression passed: %d: invalid parameter", s)
	}
	p.slop = uint32(s)
	return nil
}

// slopText renders a rejected slop argument.
func slopText(o operand) string {
	if o.c != nil {
		return o.c.String()
	}
	return describe(o)
}

// textPred is text_match or phrase_match over one field, answered from the
// field's positional index (see package textindex).
type textPred struct {
	fid      int64
	name     string
	an       *analyzer.Field
	langFid  int64 // the field choosing each row's analyzer; 0 = none
	langName string
	phrase   bool
	query    string
	terms    []string               // text_match: the query's tokens
	minMatch int                    // text_match: minimum_should_match (1 = any)
	tokens   []textindex.QueryToken // phrase_match: the query's tokens with positions
	slop     uint32
}

func (p *textPred) addFields(add func(int64)) {
	add(p.fid)
	if p.langFid != 0 {
		add(p.langFid)
	}
}

func (p *textPred) String() string {
	if p.phrase {
		return fmt.Sprintf("phrase_match(%s, %s, %d)", p.name, strconv.Quote(p.query), p.slop)
	}
	if p.minMatch > 1 {
		return fmt.Sprintf("text_match(%s, %s, minimum_should_match=%d)", p.name, strconv.Quote(p.query), p.minMatch)
	}
	return fmt.Sprintf("text_match(%s, %s)", p.name, strconv.Quote(p.query))
}

// eval marks the matching rows. A null text matches nothing and the result
// is never null, so "not text_match(...)" keeps null rows, as in Milvus.
func (p *textPred) eval(c *evalCtx) (boolVec, error) {
	col, err := c.column(p.fid, p.name)
	if err != nil {
		return boolVec{}, err
	}
	texts, ok := col.(*column.Strings)
	if !ok {
		return boolVec{}, fmt.Errorf("expr: field %s is a %T, want a string column", p.name, col)
	}
	var langs *column.Strings
	if p.langFid != 0 {
		lc, err := c.column(p.langFid, p.langName)
		if err != nil {
			return boolVec{}, err
		}
		if langs, ok = lc.(*column.Strings); !ok {
			return boolVec{}, fmt.Errorf("expr: language field %s is a %T, want a string column", p.langName, lc)
		}
	}
	idx := p.index(c)
	idx.Sync(texts, langs, c.n)
	out := make([]bool, c.n)
	if p.phrase {
		idx.MatchPhrase(p.tokens, p.slop, out)
	} else {
		idx.MatchAny(p.terms, p.minMatch, out)
	}
	return boolVec{val: out}, nil
}

// index returns the batch's cached index of the field, or a new one for a
// batch that keeps no state.
func (p *textPred) index(c *evalCtx) *textindex.Index {
	mb, ok := c.b.(MemoBatch)
	if !ok {
		return textindex.New(p.an)
	}
	an := p.an
	if x, ok := mb.Memo(textIndexKey{p.fid}, func() any { return textindex.New(an) }).(*textindex.Index); ok {
		return x
	}
	return textindex.New(p.an)
}
