// Package logtext is a slog handler that writes text lines exactly as
// slog.TextHandler does, and formats the common ones itself, faster.
//
// At its default level the gateway logs a line for every MCP request (the
// access log): the time, the level, the message and a few strings and a
// duration. slog.TextHandler's general path (a state from a pool, a
// dispatch on every attribute's kind, its own lock) cost that line a few
// microseconds under load, several per cent of a relayed call's CPU
// (docs/performance.md, round 16 of issue 16). A Handler formats a record
// whose attributes are all strings, numbers, booleans and durations
// itself, in one pass; any other record, and every handler made by
// WithAttrs or WithGroup, goes to a slog.TextHandler on the same writer.
// Both write the same bytes for the same record: the tests compare them.
package logtext

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Handler is a slog.Handler writing text lines as slog.TextHandler does.
type Handler struct {
	std   slog.Handler // a slog.TextHandler on out
	out   *lockedWriter
	level slog.Leveler
	bufs  sync.Pool // of *[]byte
}

// New returns a handler writing to w with opts. With a ReplaceAttr or
// AddSource in opts, which the handler does not do itself, it returns a
// slog.TextHandler.
func New(w io.Writer, opts *slog.HandlerOptions) slog.Handler {
	if opts == nil {
		opts = &slog.HandlerOptions{}
	}
	if opts.ReplaceAttr != nil || opts.AddSource {
		return slog.NewTextHandler(w, opts)
	}
	out := &lockedWriter{w: w}
	h := &Handler{std: slog.NewTextHandler(out, opts), out: out, level: opts.Level}
	if h.level == nil {
		h.level = slog.LevelInfo
	}
	return h
}

// Enabled reports whether level is at or above the handler's.
func (h *Handler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= h.level.Level()
}

// Handle writes r's line.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if !plain(r) {
		return h.std.Handle(ctx, r)
	}
	bp := h.buffer()
	b := appendRecord((*bp)[:0], r)
	_, err := h.out.Write(b)
	if cap(b) <= maxKeptBuffer {
		*bp = b
		h.bufs.Put(bp)
	}
	return err
}

// maxKeptBuffer bounds the buffers kept for the next lines: a longer
// line's is let go.
const maxKeptBuffer = 16 << 10

// WithAttrs returns a slog.TextHandler's handler with attrs.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler { return h.std.WithAttrs(attrs) }

// WithGroup returns a slog.TextHandler's handler with the group.
func (h *Handler) WithGroup(name string) slog.Handler { return h.std.WithGroup(name) }

// buffer returns a buffer for one line.
func (h *Handler) buffer() *[]byte {
	if bp, ok := h.bufs.Get().(*[]byte); ok {
		return bp
	}
	b := make([]byte, 0, 256)
	return &b
}

// lockedWriter serializes the writes of both of a Handler's paths.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Write writes p under the lock.
func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// plain reports whether the handler formats r itself: a time in years 0
// to 9999 (or none), and attributes with a name, each a string, a number,
// a boolean or a duration.
func plain(r slog.Record) bool {
	if y := r.Time.Year(); !r.Time.IsZero() && (y < 0 || y > 9999) {
		return false
	}
	ok := true
	r.Attrs(func(a slog.Attr) bool {
		switch a.Value.Kind() {
		case slog.KindString, slog.KindInt64, slog.KindUint64, slog.KindFloat64, slog.KindBool, slog.KindDuration:
			ok = a.Key != ""
		default:
			ok = false
		}
		return ok
	})
	return ok
}

// appendRecord appends r's line: time, level and message, then the
// attributes, as key=value separated by spaces.
func appendRecord(b []byte, r slog.Record) []byte {
	if !r.Time.IsZero() {
		b = append(b, "time="...)
		b = appendTime(b, r.Time)
		b = append(b, ' ')
	}
	b = append(b, "level="...)
	b = appendString(b, r.Level.String())
	b = append(b, " msg="...)
	b = appendString(b, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		b = append(b, ' ')
		b = appendString(b, a.Key)
		b = append(b, '=')
		b = appendValue(b, a.Value)
		return true
	})
	return append(b, '\n')
}

// appendValue appends a value of a kind plain accepts.
func appendValue(b []byte, v slog.Value) []byte {
	switch v.Kind() {
	case slog.KindString:
		return appendString(b, v.String())
	case slog.KindInt64:
		return strconv.AppendInt(b, v.Int64(), 10)
	case slog.KindUint64:
		return strconv.AppendUint(b, v.Uint64(), 10)
	case slog.KindFloat64:
		return strconv.AppendFloat(b, v.Float64(), 'g', -1, 64)
	case slog.KindBool:
		return strconv.AppendBool(b, v.Bool())
	default: // slog.KindDuration
		return append(b, v.Duration().String()...)
	}
}

// appendTime appends t as slog's text format writes a record's time: as
// RFC 3339 with milliseconds (truncated), 2006-01-02T15:04:05.000Z07:00.
func appendTime(b []byte, t time.Time) []byte {
	year, month, day := t.Date()
	hour, minute, sec := t.Clock()
	b = appendDigits(b, year, 4)
	b = appendDigits(append(b, '-'), int(month), 2)
	b = appendDigits(append(b, '-'), day, 2)
	b = appendDigits(append(b, 'T'), hour, 2)
	b = appendDigits(append(b, ':'), minute, 2)
	b = appendDigits(append(b, ':'), sec, 2)
	b = appendDigits(append(b, '.'), t.Nanosecond()/1e6, 3)
	_, offset := t.Zone()
	if offset == 0 {
		return append(b, 'Z')
	}
	minutes := offset / 60
	if minutes < 0 {
		b, minutes = append(b, '-'), -minutes
	} else {
		b = append(b, '+')
	}
	b = appendDigits(b, minutes/60, 2)
	return appendDigits(append(b, ':'), minutes%60, 2)
}

// appendDigits appends n (0 or more) in at least width digits.
func appendDigits(b []byte, n, width int) []byte {
	var buf [20]byte
	i := len(buf)
	for n >= 10 || width > 1 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
		width--
	}
	i--
	buf[i] = byte('0' + n)
	return append(b, buf[i:]...)
}

// appendString appends s, quoted as Go quotes it where slog's text
// format does (needsQuotes).
func appendString(b []byte, s string) []byte {
	if !needsQuotes(s) {
		return append(b, s...)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return strconv.AppendQuote(b, s)
		}
	}
	// Printable ASCII: only '"' and '\' are escaped.
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// bare holds the ASCII bytes slog's text format leaves unquoted: the
// printable ones but for space, '=' and '"', and DEL.
var bare = func() (t [utf8.RuneSelf]bool) {
	for c := '!'; c <= '~'; c++ {
		t[c] = c != '=' && c != '"'
	}
	t[0x7f] = true
	return t
}()

// needsQuotes reports whether slog's text format quotes s: empty; an
// ASCII control character, a space, '=' or '"' (a backslash and DEL stay
// bare); a rune that is invalid, a space or not printable.
func needsQuotes(s string) bool {
	if s == "" {
		return true
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !bare[c] {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}
