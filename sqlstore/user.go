package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mcpgate/mcpgate"
)

const userColumns = `id, name, password_hash, admin, source, created_at, updated_at`

// CreateUser stores u, setting its ID when empty and its timestamps.
// Returns ECONFLICT if the ID or name is taken.
func (s *Store) CreateUser(ctx context.Context, u *mcpgate.User) error {
	if u.ID == "" {
		u.ID = mcpgate.NewID("usr_")
	}
	u.CreatedAt = now()
	u.UpdatedAt = u.CreatedAt
	_, err := s.write.ExecContext(ctx, `INSERT INTO users (`+userColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		u.ID, u.Name, u.PasswordHash, u.Admin, u.Source, micros(u.CreatedAt), micros(u.UpdatedAt))
	if err != nil {
		return s.userWriteError(err, u)
	}
	return nil
}

// UpdateUser saves u's name, password hash, admin flag and source, and sets
// its UpdatedAt. Returns ENOTFOUND if it does not exist and ECONFLICT if the
// name is taken.
func (s *Store) UpdateUser(ctx context.Context, u *mcpgate.User) error {
	updated := now()
	var created int64
	err := s.write.QueryRowContext(ctx, `UPDATE users SET name = $2, password_hash = $3, admin = $4, source = $5, updated_at = $6
		WHERE id = $1 RETURNING created_at`,
		u.ID, u.Name, u.PasswordHash, u.Admin, u.Source, micros(updated)).Scan(&created)
	if errors.Is(err, sql.ErrNoRows) {
		return mcpgate.Errorf(mcpgate.ENOTFOUND, "user %q not found", u.ID)
	} else if err != nil {
		return s.userWriteError(err, u)
	}
	u.CreatedAt, u.UpdatedAt = fromMicros(created), updated
	return nil
}

// userWriteError maps a failed write of u to the error a user sees.
func (s *Store) userWriteError(err error, u *mcpgate.User) error {
	v := s.d.Violation(err)
	switch {
	case v.Kind == UniqueViolation && v.On("name"):
		return mcpgate.Errorf(mcpgate.ECONFLICT, "user name %q is taken", u.Name)
	case v.Kind == UniqueViolation:
		return mcpgate.Errorf(mcpgate.ECONFLICT, "user %q exists", u.ID)
	}
	return fmt.Errorf("write user %s: %w", u.ID, err)
}

// FindUserByID returns ENOTFOUND if there is no such user.
func (s *Store) FindUserByID(ctx context.Context, id string) (*mcpgate.User, error) {
	u, err := scanUser(s.queryRow(ctx, `SELECT `+userColumns+` FROM users WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "user %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("find user %s: %w", id, err)
	}
	return u, nil
}

// FindUserByName returns ENOTFOUND if there is no such user.
func (s *Store) FindUserByName(ctx context.Context, name string) (*mcpgate.User, error) {
	u, err := scanUser(s.queryRow(ctx, `SELECT `+userColumns+` FROM users WHERE name = $1`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "user %q not found", name)
	} else if err != nil {
		return nil, fmt.Errorf("find user named %s: %w", name, err)
	}
	return u, nil
}

// ListUsers returns every user, ordered by name.
func (s *Store) ListUsers(ctx context.Context) ([]*mcpgate.User, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+userColumns+` FROM users ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return collect(rows, scanUser)
}

// DeleteUser removes the user and its keys. Returns ENOTFOUND if it does not
// exist and ECONFLICT while it still owns agents.
func (s *Store) DeleteUser(ctx context.Context, id string) error {
	return s.withTx(ctx, func(tx *Store) error {
		var agents int
		err := tx.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM agents WHERE owner_id = $1`, id).Scan(&agents)
		if err != nil {
			return fmt.Errorf("count agents of user %s: %w", id, err)
		} else if agents > 0 {
			return mcpgate.Errorf(mcpgate.ECONFLICT, "user %q still owns %d agent(s): delete them or give them to another user first", id, agents)
		}
		err = tx.deleteRow(ctx, mcpgate.Errorf(mcpgate.ENOTFOUND, "user %q not found", id), `DELETE FROM users WHERE id = $1`, id)
		if tx.d.Violation(err).Kind == ForeignKeyViolation { // an agent given to the user since the count
			return mcpgate.Errorf(mcpgate.ECONFLICT, "user %q still owns agents: delete them or give them to another user first", id)
		}
		return err
	})
}

func scanUser(row scanner) (*mcpgate.User, error) {
	var u mcpgate.User
	var created, updated int64
	if err := row.Scan(&u.ID, &u.Name, &u.PasswordHash, &u.Admin, &u.Source, &created, &updated); err != nil {
		return nil, err
	}
	u.CreatedAt, u.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &u, nil
}
