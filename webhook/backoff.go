package webhook

import "time"

// Backoff is the wait after a delivery's attempt-th failed attempt: base
// doubled attempt-1 times, at most limit, then drawn between half and the
// whole of that by rnd (a number in [0, 1)).
func Backoff(attempt int, base, limit time.Duration, rnd func() float64) time.Duration {
	step := limit
	if attempt >= 1 && attempt < 40 && base<<(attempt-1) > 0 && base<<(attempt-1) < limit {
		step = base << (attempt - 1)
	}
	return step/2 + time.Duration(rnd()*float64(step/2))
}
