package openapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/netguard"
)

// Limits on loading a document.
const (
	maxDocumentBytes = 10 << 20
	loadTimeout      = 30 * time.Second
)

// Load reads a document from a file path or an http(s) URL. URLs are
// fetched through the SSRF guard, which refuses loopback and private
// addresses unless allowPrivate is set, within loadTimeout. Returns
// EINVALID when the document cannot be read or is larger than
// maxDocumentBytes, and ETIMEOUT when fetching takes too long.
//
// Load reads any file the process can: callers that take the source from
// a remote user must accept URLs only.
func Load(ctx context.Context, source string, allowPrivate bool) ([]byte, error) {
	lower := strings.ToLower(source)
	switch {
	case strings.HasPrefix(lower, "http://"), strings.HasPrefix(lower, "https://"):
		return fetch(ctx, source, allowPrivate)
	case strings.Contains(source, "://"):
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "document source: only file paths and http(s) URLs can be loaded")
	}
	f, err := os.Open(source)
	if err != nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "cannot read the document: %v", err)
	}
	defer f.Close()
	return readLimited(f)
}

// fetch GETs a document through the SSRF guard.
func fetch(ctx context.Context, source string, allowPrivate bool) ([]byte, error) {
	policy := netguard.Policy{AllowPrivate: allowPrivate}
	if err := policy.CheckURL(source); err != nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "cannot fetch the document: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, loadTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, source, nil)
	if err != nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "cannot fetch the document: the URL is not valid")
	}
	req.Header.Set("Accept", "application/json, application/yaml;q=0.9, */*;q=0.8")
	req.Header.Set("User-Agent", "mcpgate/"+mcpgate.Version)
	guard := netguard.New(nil)
	defer guard.CloseIdleConnections()
	resp, err := guard.Client(policy).Do(req)
	if err != nil {
		return nil, fetchError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "cannot fetch the document: the server answered %s", resp.Status)
	}
	data, err := readLimited(resp.Body)
	if err != nil && ctx.Err() != nil {
		return nil, fetchError(ctx, err)
	}
	return data, err
}

// fetchError describes a failed fetch without quoting the URL, whose
// query may hold a secret.
func fetchError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return mcpgate.Errorf(mcpgate.ETIMEOUT, "fetching the document took longer than %s", loadTimeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return mcpgate.Errorf(mcpgate.EINVALID, "cannot fetch the document: %v", err)
}

// readLimited reads at most maxDocumentBytes.
func readLimited(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxDocumentBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read the document: %w", err)
	}
	if len(data) > maxDocumentBytes {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "the document is larger than %d MiB", maxDocumentBytes>>20)
	}
	return data, nil
}
