package expr

import "fmt"

// Error is every parse or type error reported by Compile.
//
// Pos is the 0-based byte offset in Src where the problem was found, Msg the
// reason (naming the field when one is involved) and Src the whole filter.
type Error struct {
	// Pos is the 0-based byte offset in Src.
	Pos int
	// Msg is the reason, without position or source.
	Msg string
	// Src is the filter text that failed to compile.
	Src string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("invalid expression at position %d: %s (in `%s`)", e.Pos, e.Msg, e.Src)
}

// errAt builds an *Error without the source; Compile fills Src in.
func errAt(pos int, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}
