package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
)

// startPprof serves Go's profiling endpoints on their own listener when
// --pprof-addr is set, never on the gateway's public address.
func (m *Main) startPprof() error {
	if m.Config.PprofAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", m.Config.PprofAddr)
	if err != nil {
		return fmt.Errorf("--pprof-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.logger.Warn("pprof server stopped", "err", err)
		}
	}()
	m.closers = append(m.closers, srv.Close)
	m.logger.Info("pprof listening", "addr", ln.Addr().String())
	return nil
}
