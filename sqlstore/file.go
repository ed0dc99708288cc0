package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mcpgate/mcpgate"
)

const fileColumns = `id, user_id, filename, content_type, size, sha256, status, created_at, expires_at`

// CreateFile stores f, setting CreatedAt. Returns ECONFLICT if the ID exists.
func (s *Store) CreateFile(ctx context.Context, f *mcpgate.File) error {
	f.CreatedAt, f.ExpiresAt = now(), normalize(f.ExpiresAt)
	_, err := s.write.ExecContext(ctx, `INSERT INTO files (`+fileColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		f.ID, f.UserID, f.Filename, f.ContentType, f.Size, f.SHA256, f.Status, micros(f.CreatedAt), micros(f.ExpiresAt))
	if s.d.Violation(err).Kind == UniqueViolation {
		return mcpgate.Errorf(mcpgate.ECONFLICT, "file %q exists", f.ID)
	} else if err != nil {
		return fmt.Errorf("create file %s: %w", f.ID, err)
	}
	return nil
}

// FindFile returns a file; ENOTFOUND if none.
func (s *Store) FindFile(ctx context.Context, id string) (*mcpgate.File, error) {
	f, err := scanFile(s.write.QueryRowContext(ctx, `SELECT `+fileColumns+` FROM files WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "file %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("find file %s: %w", id, err)
	}
	return f, nil
}

// scanFile reads one row of fileColumns.
func scanFile(row scanner) (*mcpgate.File, error) {
	var f mcpgate.File
	var created, expires int64
	err := row.Scan(&f.ID, &f.UserID, &f.Filename, &f.ContentType, &f.Size, &f.SHA256, &f.Status, &created, &expires)
	if err != nil {
		return nil, err
	}
	f.CreatedAt, f.ExpiresAt = fromMicros(created), fromMicros(expires)
	return &f, nil
}

// MoveFile changes a file's status from `from` to `to` (and its digest when
// sha is set) in one conditional UPDATE, so that it succeeds once.
func (s *Store) MoveFile(ctx context.Context, id, from, to, sha string) error {
	res, err := s.write.ExecContext(ctx, `UPDATE files SET status = $3, sha256 = CASE WHEN $4 = '' THEN sha256 ELSE $4 END
		WHERE id = $1 AND status = $2`, id, from, to, sha)
	if err != nil {
		return fmt.Errorf("move file %s to %s: %w", id, to, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	if _, err := s.FindFile(ctx, id); err != nil {
		return err
	}
	return mcpgate.Errorf(mcpgate.ECONFLICT, "file %q is not %s", id, from)
}

// sweepFilesQuery deletes due files and returns them (its RETURNING list
// follows): those that never became ready, past their expiry, through
// files_unready_expires_at, and ready ones made before the retention,
// through files_created_at. The status is a literal, not a parameter, so
// that both engines see the first condition implies the partial index's.
const sweepFilesQuery = `DELETE FROM files WHERE id IN (SELECT id FROM files
	WHERE (status <> '` + mcpgate.FileReady + `' AND expires_at < $1) OR (status = '` + mcpgate.FileReady + `' AND created_at < $2) LIMIT $3)
	RETURNING `

// SweepFiles deletes at most limit due files in one statement and returns
// them; replicas sweeping at once each get the rows they deleted.
func (s *Store) SweepFiles(ctx context.Context, now, readyBefore time.Time, limit int) ([]*mcpgate.File, error) {
	rows, err := s.write.QueryContext(ctx, sweepFilesQuery+fileColumns, micros(now), micros(readyBefore), limit)
	if err != nil {
		return nil, fmt.Errorf("sweep files: %w", err)
	}
	defer rows.Close()
	var out []*mcpgate.File
	for rows.Next() {
		f, err := scanFile(rows)
		if err != nil {
			return nil, fmt.Errorf("sweep files: %w", err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// FileBlobInUse reports whether a file has the digest sum.
func (s *Store) FileBlobInUse(ctx context.Context, sum string) (bool, error) {
	var one int
	err := s.write.QueryRowContext(ctx, `SELECT 1 FROM files WHERE sha256 = $1 LIMIT 1`, sum).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("find files of blob %s: %w", sum, err)
	}
	return true, nil
}
