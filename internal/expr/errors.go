package expr

import "fmt"

// Error is every parse or type error reported by Compile.
//
// Pos is the 0-based byte offset in Src where the problem was found, Msg the
// reason (naming the field when one is involved) and Src the whole filter.
//
// Error() words it as Milvus's planner does ("cannot parse expression: SRC,
// error: MSG"), so clients that match Milvus's messages keep working; the
// position follows in brackets. A filter that parses but is not a boolean
// expression is worded as Milvus words it ("predicate is not a boolean
// expression: SRC, data type: T"), flagged by NotBoolean.
type Error struct {
	// Pos is the 0-based byte offset in Src.
	Pos int
	// Msg is the reason, without position or source.
	Msg string
	// Src is the filter text that failed to compile.
	Src string
	// NotBoolean marks a well-formed filter whose value is not boolean; Msg
	// is then the Milvus data type of that value.
	NotBoolean bool
	// Detail is Strata's own account of the problem (the operands involved),
	// kept out of Msg where Msg is Milvus's wording word for word.
	Detail string
	// UnknownFunction marks a call of a function no filter has (Milvus's
	// parser lets it through and its query engine refuses the plan).
	UnknownFunction bool
}

// Reason is the message without the position: Milvus's wording of the problem.
func (e *Error) Reason() string {
	if e.NotBoolean {
		return fmt.Sprintf("predicate is not a boolean expression: %s, data type: %s", e.Src, e.Msg)
	}
	return fmt.Sprintf("cannot parse expression: %s, error: %s", e.Src, e.Msg)
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("%s [position=%d] (%s)", e.Reason(), e.Pos, e.Detail)
	}
	return fmt.Sprintf("%s [position=%d]", e.Reason(), e.Pos)
}

// errAt builds an *Error without the source; Compile fills Src in.
func errAt(pos int, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// detailed adds Strata's own detail to e.
func (e *Error) detailed(format string, args ...any) *Error {
	e.Detail = fmt.Sprintf(format, args...)
	return e
}

// milvusType names the type of o as Milvus's planner names data types in its
// messages (Int64, Double, VarChar, Bool, JSON, Array, or a field's type).
func milvusType(o operand) string {
	switch {
	case o.json != nil:
		return "JSON"
	case o.arr != nil:
		return "Array"
	case o.p != nil:
		return "Bool"
	case o.c != nil:
		switch o.c.k {
		case vkBool:
			return "Bool"
		case vkInt:
			return "Int64"
		case vkFloat:
			return "Double"
		case vkString:
			return "VarChar"
		case vkList:
			return "Array"
		}
		return "None"
	case o.v == nil:
		return "None"
	}
	if cn, ok := o.v.(*colNode); ok {
		return cn.dt.String()
	}
	if an, ok := o.v.(*arithNode); ok {
		// Milvus types arithmetic on a JSON value by its other operand.
		if _, isJSON := an.l.(*jsonNumNode); isJSON {
			return milvusType(operand{v: an.r})
		}
		if _, isJSON := an.r.(*jsonNumNode); isJSON {
			return milvusType(operand{v: an.l})
		}
	}
	return [...]string{"Int64", "Double", "VarChar", "Bool"}[o.v.typ()]
}
