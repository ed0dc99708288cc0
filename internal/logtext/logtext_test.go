package logtext

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the package on the standard library.
func TestImports(t *testing.T) { deptest.Check(t) }

// lines returns what the handler and slog.TextHandler write for r.
func lines(t testing.TB, r slog.Record) (got, want string) {
	t.Helper()
	var a, b bytes.Buffer
	ctx := context.Background()
	opts := &slog.HandlerOptions{Level: slog.LevelDebug}
	if err := New(&a, opts).Handle(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := slog.NewTextHandler(&b, opts).Handle(ctx, r); err != nil {
		t.Fatal(err)
	}
	return a.String(), b.String()
}

// strs are strings at the edges of the text format's quoting.
var strs = []string{
	"", "ok", "tools/call", "a b", "a=b", `a"b`, `a\b`, "a\tb", "a\nb", "\x00", "\x7f", "a\u00a0b", "é", "日本",
	"\u200b", "\ufeff", "\xff", "a\xc3", "\U0001F600", "-", "+", "'", "`", "mcp-session-0123456789abcdef",
	"\u2028", "x\u0085", "\u3000", "~!@#$%^&*()_+{}|:<>?[];',./",
}

// TestHandlerWritesAsSlog: for records of every kind the handler formats
// itself, and some it does not, it writes what slog.TextHandler writes.
func TestHandlerWritesAsSlog(t *testing.T) {
	zone := time.FixedZone("X", -(3*3600 + 30*60))
	times := []time.Time{
		{}, time.Date(2026, 11, 28, 18, 4, 5, 123456789, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 999999999, zone),
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local), time.Now(), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1, 2, 3, 4, 5, 6, 7e6, time.FixedZone("S", -30)),
		time.Date(1899, 12, 31, 23, 59, 59, 999e6, time.FixedZone("LMT", 9*60+21)),
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.FixedZone("E", 14*3600)), time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	values := []slog.Value{
		slog.IntValue(0), slog.Int64Value(math.MinInt64), slog.Uint64Value(math.MaxUint64), slog.Float64Value(1.5),
		slog.Float64Value(1e21), slog.Float64Value(math.NaN()), slog.Float64Value(math.Inf(-1)), slog.BoolValue(true),
		slog.DurationValue(0), slog.DurationValue(1234567 * time.Nanosecond), slog.DurationValue(-90 * time.Minute),
		slog.DurationValue(math.MinInt64), slog.AnyValue(errors.New("boom")), slog.TimeValue(time.Unix(0, 0)),
		slog.GroupValue(slog.String("a", "b")), slog.AnyValue([]byte("bytes")),
	}
	levels := []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError, slog.LevelInfo + 2, slog.LevelError + 8}
	for i, tm := range times {
		for j, s := range strs {
			r := slog.NewRecord(tm, levels[(i+j)%len(levels)], s, 0)
			r.AddAttrs(slog.String(s, strs[(j+1)%len(strs)]), slog.String("k", s), slog.Attr{Key: "v", Value: values[(i+j)%len(values)]})
			if got, want := lines(t, r); got != want {
				t.Errorf("record %d/%d:\n got %q\nwant %q", i, j, got, want)
			}
		}
	}
}

// TestHandlerWritesAsSlogAtRandom compares the two on random records.
func TestHandlerWritesAsSlogAtRandom(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	str := func() string {
		var b strings.Builder
		for range rnd.IntN(6) {
			if rnd.IntN(3) == 0 {
				b.WriteString(strs[rnd.IntN(len(strs))])
			} else {
				b.WriteRune(rune(rnd.IntN(0x3000)))
			}
		}
		return b.String()
	}
	for i := range 5000 {
		zone := time.FixedZone("Z", rnd.IntN(2*18*3600)-18*3600)
		r := slog.NewRecord(time.Unix(rnd.Int64N(1<<38)-1<<37, rnd.Int64N(1e9)).In(zone), slog.Level(rnd.IntN(20)-8), str(), 0)
		for range rnd.IntN(8) {
			k := str()
			switch rnd.IntN(5) {
			case 0:
				r.AddAttrs(slog.Int64(k, rnd.Int64()-rnd.Int64()))
			case 1:
				r.AddAttrs(slog.Duration(k, time.Duration(rnd.Int64N(1<<40))))
			case 2:
				r.AddAttrs(slog.Float64(k, rnd.NormFloat64()*1e6))
			default:
				r.AddAttrs(slog.String(k, str()))
			}
		}
		if got, want := lines(t, r); got != want {
			t.Fatalf("record %d:\n got %q\nwant %q", i, got, want)
		}
	}
}

// TestHandlerLevelsAndDerived: the handler keeps its level, and a handler
// made with attributes or a group writes as slog's does.
func TestHandlerLevelsAndDerived(t *testing.T) {
	var a, b bytes.Buffer
	opts := &slog.HandlerOptions{Level: slog.LevelWarn}
	mine, std := slog.New(New(&a, opts)), slog.New(slog.NewTextHandler(&b, opts))
	for _, l := range []*slog.Logger{mine, std} {
		l.Info("dropped")
		l.Warn("kept", "n", 1)
		l.With("agent", "a b").WithGroup("g").Error("derived", "err", errors.New("x"), "d", time.Second)
	}
	if got, want := stripTimes(a.String()), stripTimes(b.String()); got != want || strings.Contains(got, "dropped") {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, ok := New(&a, &slog.HandlerOptions{AddSource: true}).(*slog.TextHandler); !ok {
		t.Error("with AddSource, New does not return a slog.TextHandler")
	}
	if h := New(&a, nil); h.Enabled(context.Background(), slog.LevelDebug) || !h.Enabled(context.Background(), slog.LevelInfo) {
		t.Error("without options, the handler's level is not info")
	}
}

// stripTimes drops each line's time, which the loggers read themselves.
func stripTimes(s string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		_, rest, _ := strings.Cut(line, " ")
		out = append(out, rest)
	}
	return strings.Join(out, "\n")
}

// TestHandlerAccessLineAllocs: a line of strings writes without
// allocating (one for a duration's text).
func TestHandlerAccessLineAllocs(t *testing.T) {
	h := New(discard{}, nil)
	r := accessRecord()
	h.Handle(context.Background(), r) // the pool's first buffer
	if n := testing.AllocsPerRun(100, func() { _ = h.Handle(context.Background(), r) }); n > 1 {
		t.Errorf("an access line allocates %v times, want at most 1", n)
	}
}

// discard is io.Discard without its own pooling.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// accessRecord is a record like the access log's.
func accessRecord() slog.Record {
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "mcp request", 0)
	r.AddAttrs(slog.String("method", "tools/call"), slog.String("agent", "relay"), slog.String("tool", "test_simple_text"),
		slog.String("outcome", "ok"), slog.Duration("duration", 1234567*time.Nanosecond),
		slog.String("session", "mcp-sess-0123456789abcdef0123456789abcdef"))
	return r
}

// BenchmarkAccessLine compares the handler with slog.TextHandler on an
// access-log line.
func BenchmarkAccessLine(b *testing.B) {
	for _, c := range []struct {
		name string
		h    slog.Handler
	}{{"logtext", New(discard{}, nil)}, {"slog", slog.NewTextHandler(discard{}, nil)}} {
		b.Run(c.name, func(b *testing.B) {
			r := accessRecord()
			b.ReportAllocs()
			for b.Loop() {
				_ = c.h.Handle(context.Background(), r)
			}
		})
	}
}

// FuzzHandler compares the two handlers on a record of fuzzed strings.
func FuzzHandler(f *testing.F) {
	for _, s := range strs {
		f.Add(s, s, int64(len(s)))
	}
	f.Fuzz(func(t *testing.T, msg, s string, n int64) {
		zone := time.FixedZone("F", int(n%(18*3600)))
		r := slog.NewRecord(time.Unix(n%(1<<38), n%1e9).In(zone), slog.Level(n%12), msg, 0)
		r.AddAttrs(slog.String("k", s), slog.Int64(s+"x", n), slog.Duration("d", time.Duration(n)))
		if got, want := lines(t, r); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}
