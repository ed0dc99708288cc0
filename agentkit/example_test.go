package agentkit_test

import (
	"context"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"

	"github.com/mcpgate/mcpgate/agentkit"
)

// A pull worker that answers every question in upper case, streaming a
// delta first and reading the conversation so far.
func ExampleWorker() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	w := agentkit.New(agentkit.Options{URL: "http://127.0.0.1:8094", Key: os.Getenv("MCPGATE_AGENT_KEY")})
	w.Handle(func(ctx context.Context, req *agentkit.Request) error {
		req.Delta("thinking…")
		hist, err := req.History(ctx)
		if err != nil {
			return err // the caller gets an agent_error with this text
		}
		return req.Reply(ctx, agentkit.Textf("%s (message %d of this conversation)", strings.ToUpper(req.Text()), len(hist)/2+1))
	})
	log.Fatal(w.Run(ctx))
}

// A push receiver for a skill with delivery: push; the secret is the one
// the skill's push_secret names.
func ExampleWorker_PushHandler() {
	w := agentkit.New(agentkit.Options{URL: "http://127.0.0.1:8094", Key: os.Getenv("MCPGATE_AGENT_KEY")})
	w.Handle(func(ctx context.Context, req *agentkit.Request) error {
		var args struct {
			City string `json:"city"`
		}
		if req.Tool == "forecast" {
			if err := req.Bind(&args); err != nil {
				return err
			}
			return req.Reply(ctx, &agentkit.Reply{Text: "Sunny in " + args.City, Data: map[string]string{"city": args.City, "sky": "sunny"}})
		}
		return req.Reply(ctx, agentkit.Text("Ask me for a forecast."))
	})
	http.Handle("/agent", w.PushHandler([]byte(os.Getenv("PUSH_SECRET"))))
	log.Fatal(http.ListenAndServe("127.0.0.1:8443", nil))
}
