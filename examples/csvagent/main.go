// Command csvagent is an example agent worker for mcpgate: it answers
// questions about a CSV file ("average of amount where region = EU",
// "top 3 by amount", "count by region", then "and the max?") by computing
// over it, with no other service involved.
//
// It pulls its messages from the gateway's inbox stream:
//
//	MCPGATE_AGENT_KEY=bak_… csvagent -url http://127.0.0.1:8094 -file orders.csv
//
// or, with -push-addr, serves pushed envelopes instead, verifying their
// signature with the secret in the environment variable -push-secret-env
// names. Without -file it answers about a built-in sample of 1200 orders.
//
// The agent's skill declares the csv_query tool (csvq.ToolSchema) next to
// its chat tool for hosts that prefer structured queries.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpgate/mcpgate/agentkit"
	"github.com/mcpgate/mcpgate/examples/csvagent/csvq"
)

// config is what the flags say.
type config struct {
	url, key, file, skill string
	pushAddr, pushEnv     string
	concurrency           int
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); errors.Is(err, flag.ErrHelp) {
		return
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "csvagent:", err)
		os.Exit(1)
	}
}

// parseFlags reads the command line.
func parseFlags(args []string) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("csvagent", flag.ContinueOnError)
	fs.StringVar(&c.url, "url", "http://127.0.0.1:8094", "the gateway's base URL")
	fs.StringVar(&c.key, "key", "", "the agent's API key (bak_…; default $MCPGATE_AGENT_KEY)")
	fs.StringVar(&c.file, "file", "", "the CSV file to answer about (default: a built-in sample of orders)")
	fs.StringVar(&c.skill, "skill", "", "take only this skill's messages (default: all of the agent's)")
	fs.IntVar(&c.concurrency, "concurrency", 8, "how many questions to answer at once")
	fs.StringVar(&c.pushAddr, "push-addr", "", "serve pushed envelopes on this address instead of pulling")
	fs.StringVar(&c.pushEnv, "push-secret-env", "MCPGATE_PUSH_SECRET", "the environment variable holding the push secret")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if c.key == "" {
		c.key = os.Getenv("MCPGATE_AGENT_KEY")
	}
	if c.key == "" && c.pushAddr == "" {
		return nil, errors.New("no agent key: pass -key or set MCPGATE_AGENT_KEY")
	}
	return c, nil
}

// run loads the table and answers until ctx is done.
func run(ctx context.Context, args []string) error {
	c, err := parseFlags(args)
	if err != nil {
		return err
	}
	table := csvq.Sample()
	if c.file != "" {
		if table, err = csvq.LoadFile(c.file); err != nil {
			return err
		}
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	w := agentkit.New(agentkit.Options{URL: c.url, Key: c.key, Skill: c.skill, Concurrency: c.concurrency, Logger: logger})
	w.Handle((&csvq.Agent{Table: table}).Handle)
	logger.Info("csvagent answering", "table", table.Name, "rows", len(table.Rows), "columns", len(table.Columns))
	if c.pushAddr != "" {
		return servePush(ctx, w, c, logger)
	}
	return w.Run(ctx)
}

// servePush receives pushed envelopes on c.pushAddr until ctx is done.
func servePush(ctx context.Context, w *agentkit.Worker, c *config, logger *slog.Logger) error {
	secret := os.Getenv(c.pushEnv)
	if secret == "" {
		return fmt.Errorf("push: the secret variable %s is empty", c.pushEnv)
	}
	ln, err := net.Listen("tcp", c.pushAddr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: w.PushHandler([]byte(secret))}
	go func() {
		<-ctx.Done()
		srv.Shutdown(context.WithoutCancel(ctx))
	}()
	logger.Info("csvagent push receiver listening", "addr", ln.Addr().String())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
