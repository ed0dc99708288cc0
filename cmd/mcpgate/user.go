package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
)

// runUser runs `mcpgate user create|set|list`.
func runUser(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, "Usage: mcpgate user create NAME | mcpgate user set NAME | mcpgate user list")
		return errUsage
	}
	switch args[0] {
	case "create":
		return runUserCreate(ctx, env, args[1:])
	case "set":
		return runUserSet(ctx, env, args[1:])
	case "list":
		return runUserList(ctx, env, args[1:])
	}
	fmt.Fprintf(env.Stderr, "mcpgate user: unknown subcommand %q\n", args[0])
	return errUsage
}

// runUserCreate creates a user, with a password when one is given.
func runUserCreate(ctx context.Context, env *Env, args []string) error {
	var sf storeFlags
	var admin, pwStdin bool
	var pwEnv string
	fs := newFlagSet(env, "user create", "user create NAME [--admin] [--password-env VAR | --password-stdin]")
	sf.register(fs)
	fs.BoolVar(&admin, "admin", false, "make the user an administrator")
	fs.StringVar(&pwEnv, "password-env", "", "read the user's password from this environment variable")
	fs.BoolVar(&pwStdin, "password-stdin", false, "read the user's password from the first line of standard input")
	name, err := parseWithName(fs, env, args, "NAME")
	if err != nil {
		return helpIsOK(err)
	}
	u := &mcpgate.User{Name: name, Admin: admin, Source: mcpgate.SourceCLI}
	if u.PasswordHash, err = readPassword(env, pwEnv, pwStdin); err != nil {
		return err
	}
	return withStore(ctx, env, &sf, func(s mcpgate.Store) error {
		if err := s.CreateUser(ctx, u); err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, u.ID)
		return nil
	})
}

// readPassword hashes the password from the named source, or returns ""
// when none is given.
func readPassword(env *Env, fromEnv string, fromStdin bool) (string, error) {
	var pw string
	switch {
	case fromEnv != "":
		v, ok := env.LookupEnv(fromEnv)
		if !ok || v == "" {
			return "", fmt.Errorf("--password-env: %s is not set", fromEnv)
		}
		pw = v
	case fromStdin:
		line, err := bufio.NewReader(env.Stdin).ReadString('\n')
		if pw = strings.TrimRight(line, "\r\n"); pw == "" {
			return "", fmt.Errorf("--password-stdin: no password on standard input (%v)", err)
		}
	default:
		return "", nil
	}
	if len(pw) < auth.MinPasswordLen {
		return "", fmt.Errorf("the password must have at least %d characters", auth.MinPasswordLen)
	}
	return auth.HashPassword(pw)
}

// runUserList prints every user.
func runUserList(ctx context.Context, env *Env, args []string) error {
	var sf storeFlags
	fs := newFlagSet(env, "user list", "user list")
	sf.register(fs)
	if err := parseFlags(fs, env, args); err != nil {
		return helpIsOK(err)
	}
	return withStore(ctx, env, &sf, func(s mcpgate.Store) error {
		users, err := s.ListUsers(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tADMIN\tPASSWORD\tSOURCE\tCREATED")
		for _, u := range users {
			fmt.Fprintf(tw, "%s\t%s\t%v\t%v\t%s\t%s\n", u.ID, u.Name, u.Admin, u.PasswordHash != "", u.Source, u.CreatedAt.Format(timeFmt))
		}
		return tw.Flush()
	})
}

// parseWithName parses flags around exactly one positional argument,
// which may come before or after the flags.
func parseWithName(fs *flag.FlagSet, env *Env, args []string, what string) (string, error) {
	var name string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if err := parseFlags(fs, env, args); err != nil {
		return "", err
	}
	if name == "" && fs.NArg() == 1 {
		name = fs.Arg(0)
	} else if fs.NArg() > 0 || name == "" {
		fmt.Fprintf(env.Stderr, "expected exactly one %s\n", what)
		fs.Usage()
		return "", errUsage
	}
	return name, nil
}

// helpIsOK turns -h into success.
func helpIsOK(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// withStore opens an existing store, runs fn, and closes it.
func withStore(ctx context.Context, env *Env, sf *storeFlags, fn func(mcpgate.Store) error) error {
	s, err := sf.openExisting(ctx, env)
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(s) // main shows a coded error by its message alone
}
