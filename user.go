package mcpgate

import (
	"context"
	"fmt"
	"regexp"
	"time"
)

// Sources say which way of managing the gateway created an entry. Applying
// the config file removes the entries with SourceConfig that the file no
// longer names, and never touches the others.
const (
	SourceConfig = "config" // declared in the YAML config file
	SourceCLI    = "cli"    // created with an admin subcommand
	SourceDemo   = "demo"   // created by serve --demo
	SourceAPI    = "api"    // created through the management API
	SourceUI     = "ui"     // created in the dashboard
)

// User is a person: owns agents, holds user API keys and signs in to the
// dashboard and the OAuth consent page.
type User struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// PasswordHash is a PHC-formatted memory-hard hash, or "" when the user
	// cannot sign in with a password.
	PasswordHash string    `json:"-"`
	Admin        bool      `json:"admin"`
	Source       string    `json:"source"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// UserStore keeps users.
type UserStore interface {
	// CreateUser stores u, setting its ID when empty and its timestamps.
	// Returns ECONFLICT if the name is taken.
	CreateUser(ctx context.Context, u *User) error
	// UpdateUser saves u's name, password hash, admin flag and source.
	// Returns ENOTFOUND if it does not exist.
	UpdateUser(ctx context.Context, u *User) error
	// FindUserByID returns ENOTFOUND if there is no such user.
	FindUserByID(ctx context.Context, id string) (*User, error)
	// FindUserByName returns ENOTFOUND if there is no such user.
	FindUserByName(ctx context.Context, name string) (*User, error)
	// ListUsers returns every user, ordered by name.
	ListUsers(ctx context.Context) ([]*User, error)
	// DeleteUser removes the user and its keys. Returns ENOTFOUND if it does
	// not exist and ECONFLICT while it still owns agents.
	DeleteUser(ctx context.Context, id string) error
}

// userNamePattern keeps user names printable and short.
var userNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$`)

// CheckUserName returns the problem of a user's login name, nil when it
// has none; the message does not repeat the field.
func CheckUserName(name string) *Problem {
	switch {
	case name == "":
		return &Problem{Field: "name", Msg: "is required: the user's login name"}
	case !userNamePattern.MatchString(name):
		return &Problem{Field: "name", Msg: fmt.Sprintf("%q: use 1 to 64 letters, digits, '_', '.', '@' or '-', starting with a letter or digit", name)}
	}
	return nil
}
