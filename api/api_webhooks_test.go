package api

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/seal"
	"github.com/mcpgate/mcpgate/webhook"
)

// mustWebhooks returns the webhook service over st, with a fixed key.
func mustWebhooks(st webhook.Store) *webhook.Service {
	box, err := seal.New(bytes.Repeat([]byte{3}, seal.KeySize))
	if err != nil {
		panic(err)
	}
	return webhook.NewService(&webhook.ServiceOptions{Store: st, Sealer: box})
}

func TestWebhookRoutes(t *testing.T) {
	f := mustAPIFixture(t)
	const hooks = "/api/v1/webhooks"
	var made struct {
		mcpgate.Webhook
		Secret string `json:"secret"`
	}
	f.call(t, "POST", hooks, f.alice, `{"url":"https://203.0.113.7/in","events":["call.completed","call.failed"]}`).want(t, http.StatusCreated).decode(t, &made)
	if !strings.HasPrefix(made.Secret, "whsec_") || made.ID == "" || len(made.Events) != 2 {
		t.Fatalf("created %+v", made)
	}
	f.call(t, "POST", hooks, f.bob, `{"url":"https://203.0.113.8/in","events":["task.failed"],"secret":"bobs-own-long-secret"}`).want(t, http.StatusCreated)
	if body := f.call(t, "GET", hooks+"/"+made.ID, f.alice, "").want(t, http.StatusOK).body; strings.Contains(body, made.Secret) || strings.Contains(body, "secret") {
		t.Errorf("GET shows the secret: %s", body)
	}
	var list struct{ Webhooks []*mcpgate.Webhook }
	f.call(t, "GET", hooks, f.alice, "").want(t, http.StatusOK).decode(t, &list)
	if len(list.Webhooks) != 1 || list.Webhooks[0].ID != made.ID {
		t.Errorf("alice lists %+v", list.Webhooks)
	}
	f.call(t, "GET", hooks, f.root, "").want(t, http.StatusOK).decode(t, &list)
	if len(list.Webhooks) != 2 {
		t.Errorf("the admin lists %d webhooks, want 2", len(list.Webhooks))
	}
	f.call(t, "GET", hooks+"/"+made.ID, f.bob, "").want(t, http.StatusNotFound)
	f.call(t, "DELETE", hooks+"/"+made.ID, f.bob, "").want(t, http.StatusNotFound)
	f.call(t, "GET", hooks+"/"+made.ID+"/deliveries", f.bob, "").want(t, http.StatusNotFound)
	f.call(t, "GET", hooks, f.shopKey, "").want(t, http.StatusForbidden)
	var dl struct{ Deliveries []*mcpgate.WebhookDelivery }
	f.call(t, "GET", hooks+"/"+made.ID+"/deliveries", f.alice, "").want(t, http.StatusOK).decode(t, &dl)
	if dl.Deliveries == nil || len(dl.Deliveries) != 0 {
		t.Errorf("deliveries %+v, want an empty list", dl.Deliveries)
	}
	f.call(t, "POST", hooks+"/"+made.ID+"/deliveries/dlv_x/redeliver", f.alice, "").want(t, http.StatusNotFound)
	f.call(t, "DELETE", hooks+"/"+made.ID, f.alice, "").want(t, http.StatusNoContent)
	f.call(t, "GET", hooks+"/"+made.ID, f.alice, "").want(t, http.StatusNotFound)
}

func TestWebhookCreateRefuses(t *testing.T) {
	f := mustAPIFixture(t)
	for _, body := range []string{
		`{"url":"http://127.0.0.1:9/in","events":["call.completed"]}`,
		`{"url":"http://169.254.169.254/","events":["call.completed"]}`,
		`{"url":"https://203.0.113.7/in","events":[]}`,
		`{"url":"https://203.0.113.7/in","events":["call.done"]}`,
		`{"url":"https://203.0.113.7/in","events":["call.failed"],"secret":"short"}`,
		`{"url":"https://203.0.113.7/in","events":["call.failed"],"extra":1}`,
	} {
		f.call(t, "POST", "/api/v1/webhooks", f.alice, body).want(t, http.StatusBadRequest)
	}
}
