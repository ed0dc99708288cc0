// Command mcpgate is the MCP gateway: `mcpgate serve` runs it, and the
// admin subcommands (user, key, agent) work on the same database directly
// so that set-up is scriptable without a running server.
//
// This is the only place where the gateway's packages are wired together.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpgate/mcpgate"
)

// usage is the top-level help.
const usage = `mcpgate: a self-hostable MCP gateway.

Usage:
  mcpgate serve [--demo] [--config FILE] [flags]   run the gateway ("mcpgate help serve" lists its flags)
  mcpgate init                                      create the database (serve does too)
  mcpgate user create NAME [--admin] [--password-env VAR | --password-stdin]
  mcpgate user set NAME [--password-env VAR | --password-stdin] [--admin | --no-admin]
  mcpgate user list
  mcpgate key create --user NAME [--name LABEL] [--expires-in DURATION]   prints a new user key (oag_…)
  mcpgate key create --agent ID [--name LABEL] [--expires-in DURATION]    prints a new agent key (bak_…)
  mcpgate key list [--user NAME | --agent ID]
  mcpgate key show ID
  mcpgate key set ID [--name LABEL] [--expires-in DURATION | --no-expiry]
  mcpgate key revoke ID
  mcpgate agent list
  mcpgate agent show ID
  mcpgate import openapi FILE_OR_URL --agent ID --skill NAME [--include P] [--exclude P] [--prefix P] [--base-url URL] [--allow-private]
  mcpgate load [--url URL] [--key KEY] [--method tools/call|tools/list] [--tool NAME] [--args JSON] [--sessions N] [--rate R] [--duration D] [--requests N] [--pid PID] [--keys [--retries N] [--retry-backoff D]] [--follow] [--events FILE] [--idle N [--streams]] [--turn "NAME URL KEY" … [--turn-gap D]]
  mcpgate calls list [--agent ID] [--tool T] [--user NAME] [--outcome O] [--since T] [--until T] [--limit N] [--cursor C] [--json]
  mcpgate approvals list [--state S] [--agent ID] [--limit N] [--json]
  mcpgate approvals approve|reject ID [--reason TEXT] [--as NAME]
                                                   the audit log, newest first
  mcpgate healthcheck [--addr ADDR | --url URL] [--timeout D]   exit 0 when the gateway's /readyz answers 200 (a container's HEALTHCHECK)
  mcpgate version
  mcpgate help [COMMAND [SUBCOMMAND]]               a command's flags and their defaults

Every command but load, healthcheck and version takes --data-dir (default ./mcpgate-data)
and --db (a PostgreSQL DSN; default: SQLite in the data dir); commands other
than serve and init refuse a data dir that holds no database. Every flag can
also be set as MCPGATE_<FLAG> in the environment, e.g. MCPGATE_DATA_DIR.
DURATION is like 90d, 12h or 30m.
`

// errUsage reports a usage error whose message was already printed.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &Env{Stdout: os.Stdout, Stderr: os.Stderr, Stdin: os.Stdin, LookupEnv: os.LookupEnv}
	if err := Run(ctx, env, os.Args[1:]); err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "mcpgate:", userMessage(err))
		}
		os.Exit(exitCode(err))
	}
}

// Env is what a command may use of the outside world, so that tests can
// run commands in-process.
type Env struct {
	Stdout, Stderr io.Writer
	Stdin          io.Reader
	LookupEnv      func(string) (string, bool)
}

// Run runs the command named by args[0].
func Run(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, usage)
		return errUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return runServe(ctx, env, rest)
	case "init":
		return runInit(ctx, env, rest)
	case "user":
		return runUser(ctx, env, rest)
	case "key":
		return runKey(ctx, env, rest)
	case "agent":
		return runAgent(ctx, env, rest)
	case "import":
		return runImport(ctx, env, rest)
	case "load":
		return runLoad(ctx, env, rest)
	case "calls":
		return runCalls(ctx, env, rest)
	case "approvals":
		return runApprovals(ctx, env, rest)
	case "healthcheck":
		return runHealthcheck(ctx, env, rest)
	case "version", "--version", "-version":
		return runVersion(env)
	case "help", "-h", "--help":
		return runHelp(ctx, env, rest)
	}
	fmt.Fprintf(env.Stderr, "mcpgate: unknown command %q\n\n%s", cmd, usage)
	return errUsage
}

// exitCode is 2 for usage errors and 1 otherwise.
func exitCode(err error) int {
	if errors.Is(err, errUsage) {
		return 2
	}
	return 1
}

// userMessage is what a user reads of err: a coded error's message, or the
// whole chain of an internal one, which names what failed.
func userMessage(err error) string {
	if mcpgate.ErrorCode(err) != mcpgate.EINTERNAL {
		return mcpgate.ErrorMessage(err)
	}
	return err.Error()
}
