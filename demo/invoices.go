package demo

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// invoiceDir is the folder under the data directory that holds saved
// invoices.
const invoiceDir = "demo-invoices"

// maxInvoiceRows bounds the rows of one saved file.
const maxInvoiceRows = 1000

// FilenamePattern is what an invoice file's name (without .csv) must match.
// It leaves no room for a path separator or "..".
const FilenamePattern = `^[A-Za-z0-9_-]{1,64}$`

var filenameRE = regexp.MustCompile(FilenamePattern)

// csvHeader is the first row of every saved file.
var csvHeader = []string{"date", "vendor", "description", "amount"}

// invoiceRow is one row of POST /invoices/{filename}/csv.
type invoiceRow struct {
	Date        string   `json:"date"`
	Vendor      string   `json:"vendor"`
	Description string   `json:"description"`
	Amount      *float64 `json:"amount"`
}

// saveRequest is the body of POST /invoices/{filename}/csv.
type saveRequest struct {
	Rows []invoiceRow `json:"rows"`
}

// savedFile describes a saved invoice file. Path is relative to the
// gateway's data directory, such as "demo-invoices/jan.csv": results never
// show where the server keeps its files.
type savedFile struct {
	Filename string  `json:"filename"`
	Path     string  `json:"path"`
	Rows     int     `json:"rows"`
	Total    float64 `json:"total"`
}

// handleSaveInvoice writes rows as a CSV file, replacing any file of the
// same name.
func (a *api) handleSaveInvoice(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("filename")
	if !filenameRE.MatchString(name) {
		return badRequest("filename %q: use 1 to 64 letters, digits, '_' or '-' (no extension, no path)", name)
	}
	var req saveRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	data, cents, err := invoiceCSV(req.Rows)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(a.dataDir, invoiceDir, name+".csv"), data); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, savedFile{Filename: name, Path: shownPath(name), Rows: len(req.Rows), Total: fromCents(cents)})
}

// shownPath is the path of the named invoice file as results show it:
// relative to the data directory, with forward slashes on every system.
func shownPath(name string) string {
	return invoiceDir + "/" + name + ".csv"
}

// invoiceCSV validates rows and encodes them with a header row, returning
// the file and the total in cents.
func invoiceCSV(rows []invoiceRow) ([]byte, int64, error) {
	if len(rows) == 0 || len(rows) > maxInvoiceRows {
		return nil, 0, badRequest("rows: give 1 to %d rows", maxInvoiceRows)
	}
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	cw.UseCRLF = true
	var total int64
	records := [][]string{csvHeader}
	for i, row := range rows {
		cents, err := checkRow(row)
		if err != nil {
			return nil, 0, badRequest("rows[%d]: %v", i, err)
		}
		total += cents
		records = append(records, []string{row.Date, cellText(row.Vendor), cellText(row.Description), formatCents(cents)})
	}
	if err := cw.WriteAll(records); err != nil {
		return nil, 0, fmt.Errorf("encode csv: %w", err)
	}
	return buf.Bytes(), total, nil
}

// checkRow validates a row and returns its amount in cents.
func checkRow(row invoiceRow) (int64, error) {
	if _, err := time.Parse(time.DateOnly, row.Date); err != nil {
		return 0, fmt.Errorf("date %q: use YYYY-MM-DD", row.Date)
	}
	if strings.TrimSpace(row.Vendor) == "" {
		return 0, errors.New("vendor is required")
	}
	if row.Amount == nil {
		return 0, errors.New("amount is required")
	}
	if math.Abs(*row.Amount) >= 1e13 {
		return 0, fmt.Errorf("amount %v is out of range", *row.Amount)
	}
	return int64(math.Round(*row.Amount * 100)), nil
}

// cellText keeps a text cell from being read as a formula by spreadsheet
// programs, which run cells starting with =, +, -, @, tab or CR.
func cellText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// formatCents writes an amount in cents as a decimal with two digits.
func formatCents(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

// fromCents converts cents to a JSON number.
func fromCents(c int64) float64 { return float64(c) / 100 }

// writeFileAtomic writes data to path through a temporary file in the same
// folder and a rename, so that readers never see half a file.
func writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".tmp-*.csv")
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", f.Name(), err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", f.Name(), err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", f.Name(), err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("rename to %s: %w", path, err)
	}
	return nil
}

// handleListInvoices lists the saved files with their row counts and
// totals, by name.
func (a *api) handleListInvoices(w http.ResponseWriter, r *http.Request) error {
	dir := filepath.Join(a.dataDir, invoiceDir)
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", dir, err)
	}
	files := []savedFile{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".csv")
		if !ok || !e.Type().IsRegular() || !filenameRE.MatchString(name) {
			continue
		}
		f, err := summarize(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		f.Filename, f.Path = name, shownPath(name)
		files = append(files, *f)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"invoices": files, "count": len(files)})
}

// summarize counts the rows of a saved file and adds up its amounts.
func summarize(path string) (*savedFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	records, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil || len(records) == 0 {
		return nil, statusf(http.StatusInternalServerError, "%s is not a CSV file this demo wrote", filepath.Base(path))
	}
	f := &savedFile{Rows: len(records) - 1}
	var total int64
	for _, rec := range records[1:] {
		v, err := strconv.ParseFloat(rec[len(rec)-1], 64)
		if err != nil {
			return nil, statusf(http.StatusInternalServerError, "%s: amount %q is not a number", filepath.Base(path), rec[len(rec)-1])
		}
		total += int64(math.Round(v * 100))
	}
	f.Total = fromCents(total)
	return f, nil
}
