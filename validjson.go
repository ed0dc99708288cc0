package mcpgate

// ValidJSON reports whether b is one JSON value, surrounded by nothing
// but whitespace: what encoding/json.Valid reports, for every input, in
// one pass without a scanner's function call a byte (about twice as fast
// on a JSON-RPC message, BenchmarkValidJSON). Like encoding/json it
// accepts any byte from 0x20 up inside strings, valid UTF-8 or not, and
// at most 10,000 nested arrays and objects.
func ValidJSON(b []byte) bool {
	v := validator{b: b}
	v.i = v.space(0)
	if !v.value() {
		return false
	}
	return v.space(v.i) == len(b)
}

// maxJSONDepth is encoding/json's limit on nested arrays and objects.
const maxJSONDepth = 10000

// validator walks one JSON value. Containers are tracked on a stack of
// bits (1 for an object), not by recursion, so that nesting costs no Go
// stack.
type validator struct {
	b     []byte
	i     int
	depth int
	obj   bool      // the innermost open container is an object
	small [4]uint64 // the stack, while it fits
	stack []uint64  // the stack, beyond 256 levels
}

// value validates the value at v.i and the containers it opens, leaving
// v.i past it.
func (v *validator) value() bool {
	for {
		if !v.scalarOrOpen() {
			return false
		}
		if !v.closeAll() {
			return false
		}
		if v.depth == 0 {
			return true
		}
	}
}

// scalarOrOpen reads a value at v.i: a scalar, or the start of an array
// or object up to its first value (its end, when it is empty).
func (v *validator) scalarOrOpen() bool {
	for {
		if v.i >= len(v.b) {
			return false
		}
		switch c := v.b[v.i]; {
		case c == '{' || c == '[':
			empty, ok := v.open(c == '{')
			if !ok || empty {
				return ok
			}
			if c == '{' && !v.key() {
				return false
			}
		case c == '"':
			return v.str()
		case c == '-' || '0' <= c && c <= '9':
			return v.number()
		case c == 't':
			return v.literal("true")
		case c == 'f':
			return v.literal("false")
		case c == 'n':
			return v.literal("null")
		default:
			return false
		}
	}
}

// open reads the start of an array or object (obj) at v.i, and reports
// whether it was empty, leaving v.i past its end then, at its first
// member otherwise.
func (v *validator) open(obj bool) (empty, ok bool) {
	if !v.push(obj) {
		return false, false
	}
	end := byte(']')
	if obj {
		end = '}'
	}
	v.i = v.space(v.i + 1)
	if v.i < len(v.b) && v.b[v.i] == end {
		v.i++
		v.pop()
		return true, true
	}
	return false, true
}

// closeAll reads what follows a value: the ends of the containers it
// closes, up to a comma (then past the next member's key, if in an
// object), or to the end of the outermost value.
func (v *validator) closeAll() bool {
	for v.depth > 0 {
		v.i = v.space(v.i)
		if v.i >= len(v.b) {
			return false
		}
		switch c := v.b[v.i]; {
		case c == ',':
			v.i = v.space(v.i + 1)
			if v.obj {
				return v.key()
			}
			return true
		case c == '}' && v.obj, c == ']' && !v.obj:
			v.i++
			v.pop()
		default:
			return false
		}
	}
	return true
}

// key reads an object's key and its colon, leaving v.i at the value.
func (v *validator) key() bool {
	if v.i >= len(v.b) || v.b[v.i] != '"' || !v.str() {
		return false
	}
	v.i = v.space(v.i)
	if v.i >= len(v.b) || v.b[v.i] != ':' {
		return false
	}
	v.i = v.space(v.i + 1)
	return true
}

// push opens a container, an object when obj.
func (v *validator) push(obj bool) bool {
	if v.depth == maxJSONDepth {
		return false
	}
	if v.depth/64 == len(v.small) && v.stack == nil {
		v.stack = make([]uint64, (maxJSONDepth+63)/64)
		copy(v.stack, v.small[:])
	}
	w, bit := &v.words()[v.depth/64], uint64(1)<<(v.depth%64)
	if obj {
		*w |= bit
	} else {
		*w &^= bit
	}
	v.depth++
	v.obj = obj
	return true
}

// pop closes the innermost container.
func (v *validator) pop() {
	v.depth--
	if d := v.depth - 1; d >= 0 {
		v.obj = v.words()[d/64]&(uint64(1)<<(d%64)) != 0
	}
}

// words is the stack of open containers.
func (v *validator) words() []uint64 {
	if v.stack != nil {
		return v.stack
	}
	return v.small[:]
}

// space returns the index of the first byte from i that is not JSON
// whitespace.
func (v *validator) space(i int) int { return SkipJSONSpace(v.b, i) }

// SkipJSONSpace returns the index of the first byte of b from i that is
// not JSON whitespace (space, tab, line feed, carriage return), len(b) if
// none is, for the hand-written JSON readers of the hot path.
func SkipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// str reads the string at v.i (its opening quote), leaving v.i past it.
func (v *validator) str() bool {
	b := v.b
	for i := v.i + 1; i < len(b); {
		for i < len(b) && plainInString[b[i]] {
			i++
		}
		if i == len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '"':
			v.i = i + 1
			return true
		case c == '\\':
			n := escapeLen(b[i+1:])
			if n == 0 {
				return false
			}
			i += 1 + n
		case c < 0x20:
			return false
		default:
			i++
		}
	}
	return false
}

// plainInString holds the bytes a string holds as they are: all from
// 0x20 but the quote and the backslash.
var plainInString = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// escapeLen returns how many bytes of b, which follows a backslash, make
// a valid escape; 0 when they do not.
func escapeLen(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	switch b[0] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 1
	case 'u':
		if len(b) < 5 {
			return 0
		}
		for _, c := range b[1:5] {
			if !isHex(c) {
				return 0
			}
		}
		return 5
	}
	return 0
}

// isHex reports whether c is a hexadecimal digit.
func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// number reads the number at v.i: an optional minus, an integer part
// without leading zeros, an optional fraction and exponent.
func (v *validator) number() bool {
	b, i := v.b, v.i
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		if i++; i >= len(b) || !isDigit(b[i]) {
			return false
		}
		i = digits(b, i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		if i++; i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return false
		}
		i = digits(b, i)
	}
	v.i = i
	return true
}

// digits returns the index past the digits of b from i.
func digits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

// isDigit reports whether c is a decimal digit.
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// literal reads the literal word at v.i.
func (v *validator) literal(word string) bool {
	if len(v.b)-v.i < len(word) || string(v.b[v.i:v.i+len(word)]) != word {
		return false
	}
	v.i += len(word)
	return true
}
