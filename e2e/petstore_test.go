package e2e

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"sync"
)

// pet is the Petstore's Pet, with the fields the tests send.
type pet struct {
	ID        int64    `json:"id"`
	Name      string   `json:"name"`
	PhotoURLs []string `json:"photoUrls"`
	Status    string   `json:"status,omitempty"`
}

// petRequest is what the Petstore backend saw of one request.
type petRequest struct {
	Method, Path, Query, APIKey, Auth string
}

// petStore implements three Petstore operations (addPet, getPetById,
// findPetsByStatus) on an in-memory map, and records every request.
type petStore struct {
	mux  *http.ServeMux
	mu   sync.Mutex
	pets map[int64]pet
	seen []petRequest
}

// newPetStore returns an empty store.
func newPetStore() *petStore {
	p := &petStore{mux: http.NewServeMux(), pets: map[int64]pet{}}
	p.mux.HandleFunc("POST /pet", p.addPet)
	p.mux.HandleFunc("GET /pet/findByStatus", p.findByStatus)
	p.mux.HandleFunc("GET /pet/{petId}", p.getPet)
	return p
}

// ServeHTTP records the request and serves the three operations.
func (p *petStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.seen = append(p.seen, petRequest{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("api_key"), r.Header.Get("Authorization")})
	p.mu.Unlock()
	p.mux.ServeHTTP(w, r)
}

// requests returns the requests seen so far.
func (p *petStore) requests() []petRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seen)
}

// stored returns the pet of an ID, if the store has it.
func (p *petStore) stored(id int64) (pet, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pt, ok := p.pets[id]
	return pt, ok
}

// addPet stores the pet in the body and answers with it.
func (p *petStore) addPet(w http.ResponseWriter, r *http.Request) {
	var in pet
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Name == "" {
		writePetJSON(w, http.StatusUnprocessableEntity, map[string]any{"code": 422, "message": "invalid pet"})
		return
	}
	p.mu.Lock()
	p.pets[in.ID] = in
	p.mu.Unlock()
	writePetJSON(w, http.StatusOK, in)
}

// getPet answers with one pet, or 404.
func (p *petStore) getPet(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("petId"), 10, 64)
	p.mu.Lock()
	found, ok := p.pets[id]
	p.mu.Unlock()
	if err != nil || !ok {
		writePetJSON(w, http.StatusNotFound, map[string]any{"code": 404, "message": "Pet not found"})
		return
	}
	writePetJSON(w, http.StatusOK, found)
}

// findByStatus answers with the pets of a status, by ID.
func (p *petStore) findByStatus(w http.ResponseWriter, r *http.Request) {
	status := r.URL.Query().Get("status")
	if status == "" {
		status = "available"
	}
	list := []pet{}
	p.mu.Lock()
	for _, pt := range p.pets {
		if pt.Status == status {
			list = append(list, pt)
		}
	}
	p.mu.Unlock()
	slices.SortFunc(list, func(a, b pet) int { return int(a.ID - b.ID) })
	writePetJSON(w, http.StatusOK, list)
}

// writePetJSON writes v as JSON with status.
func writePetJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
