// Package proctime reads the CPU time the current process has used, for
// the benchmarks that report CPU per call beside wall time. It imports
// only the standard library.
package proctime
