package demo

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
)

// deletedFile is the answer to a delete: which file, and whether this
// call removed it (false: there was no such file).
type deletedFile struct {
	Filename string `json:"filename"`
	Path     string `json:"path"`
	Deleted  bool   `json:"deleted"`
}

// handleDeleteInvoice removes a saved invoice file. A name with no file
// is not an error: the file is gone either way, and the answer says so.
func (a *api) handleDeleteInvoice(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("filename")
	if !filenameRE.MatchString(name) {
		return badRequest("filename %q: use 1 to 64 letters, digits, '_' or '-' (no extension, no path)", name)
	}
	err := os.Remove(filepath.Join(a.dataDir, invoiceDir, name+".csv"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete %s: %w", name, err)
	}
	return writeJSON(w, http.StatusOK, deletedFile{Filename: name, Path: shownPath(name), Deleted: err == nil})
}
