package registry

// Loaded reports whether the tables have been loaded at least once, for a
// replica's readiness.
func (r *Registry) Loaded() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.loaded
}
