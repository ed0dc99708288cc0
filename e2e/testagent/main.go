// Command testagent is an agent worker for the end-to-end tests, built on
// agentkit: for each chat message it prints "got <message id>" on stdout
// (and "trace <message id> <traceparent>" when the message has one;
// -quiet prints neither, for load tests), then with -mode echo replies
// with the text it got (and, for each attachment, its name and the
// SHA-256 of the bytes it read through the signed URL), and with -mode
// stall sends one delta and waits until the caller cancels, printing
// "cancelled <message id>", never replying.
package main

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpgate/mcpgate/agentkit"
)

func main() {
	url := flag.String("url", "", "the gateway's base URL")
	mode := flag.String("mode", "echo", "echo or stall")
	concurrency := flag.Int("concurrency", 8, "how many messages to handle at once")
	quiet := flag.Bool("quiet", false, "print no line a message (for load tests)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	w := agentkit.New(agentkit.Options{URL: *url, Key: os.Getenv("MCPGATE_AGENT_KEY"), Concurrency: *concurrency, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	w.Handle(func(ctx context.Context, req *agentkit.Request) error {
		if !*quiet {
			fmt.Println("got", req.ID())
			if tp := req.Trace().Parent; tp != "" {
				fmt.Println("trace", req.ID(), tp)
			}
		}
		if *mode == "echo" {
			return echo(ctx, req)
		}
		req.Delta("stalling")
		<-ctx.Done()
		fmt.Println("cancelled", req.ID())
		return ctx.Err()
	})
	if err := w.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "testagent:", err)
		os.Exit(1)
	}
}

// echo replies with the text, then a line "<name> sha256 <hex>" for each
// attachment, read through its signed URL.
func echo(ctx context.Context, req *agentkit.Request) error {
	text := "echo: " + req.Text()
	for _, a := range req.Attachments() {
		rc, err := req.OpenAttachment(ctx, a)
		if err != nil {
			return err
		}
		h := sha256.New()
		_, err = io.Copy(h, rc)
		rc.Close()
		if err != nil {
			return err
		}
		text += fmt.Sprintf("\n%s sha256 %x", a.Name, h.Sum(nil))
	}
	return req.Reply(ctx, agentkit.Text(text))
}
