package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

func taskTests() []test {
	return []test{
		{"CreateFind", testTaskCreateFind},
		{"FinishOnce", testTaskFinishOnce},
		{"Message", testTaskMessage},
		{"ConcurrentEnds", testTaskConcurrentEnds},
		{"List", testTaskList},
		{"ListOwnerAgents", testTaskListOwnerAgents},
		{"ByKey", testTaskByKey},
		{"Stale", testTaskStale},
		{"Expire", testTaskExpire},
	}
}

// newTask returns a task of agent's tool by identity, made at t, kept an
// hour, run by runner.
func newTask(agent, identity, runner string, t time.Time) *mcpgate.Task {
	return &mcpgate.Task{AgentID: agent, Tool: "report", Identity: identity, UserID: "u1",
		CredentialKind: mcpgate.CredentialUserKey, CredentialID: "key_1", ArgsHash: "h1",
		CreatedAt: t, TTL: time.Hour, Runner: runner}
}

func testTaskCreateFind(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	task := newTask("weather", "user:u1", "r1", time.Now())
	task.SessionID, task.IdempotencyKey, task.StatusMessage = "ses_1", "k1", "started"
	must(t, s.CreateTask(ctx, task))
	if task.ID == "" || task.Status != mcpgate.TaskWorking || !task.ExpiresAt.Equal(task.CreatedAt.Add(time.Hour)) {
		t.Fatalf("created = %+v; want an ID, working, expiring in an hour", task)
	}
	got, err := s.FindTask(ctx, task.ID)
	must(t, err)
	mustEqual(t, "task", got, task)
	mustStoredTime(t, "CreatedAt", got.CreatedAt)
	_, err = s.FindTask(ctx, "task_missing")
	mustCode(t, err, mcpgate.ENOTFOUND)
}

func testTaskFinishOnce(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	task := newTask("weather", "user:u1", "r1", time.Now())
	must(t, s.CreateTask(ctx, task))
	at := time.Now().UTC().Truncate(time.Microsecond)
	res := []byte(`{"content":[{"type":"text","text":"ok"}]}`)
	got, err := s.FinishTask(ctx, task.ID, mcpgate.TaskEnd{Status: mcpgate.TaskCompleted, Result: res, At: at})
	must(t, err)
	if got.Status != mcpgate.TaskCompleted || string(got.Result) != string(res) || !got.UpdatedAt.Equal(at) {
		t.Fatalf("finished = %+v", got)
	}
	late, err := s.FinishTask(ctx, task.ID, mcpgate.TaskEnd{Status: mcpgate.TaskCancelled})
	mustCode(t, err, mcpgate.ECONFLICT)
	if late == nil || late.Status != mcpgate.TaskCompleted {
		t.Fatalf("late end: row = %+v; want the first end", late)
	}
	_, err = s.FinishTask(ctx, "task_missing", mcpgate.TaskEnd{Status: mcpgate.TaskFailed})
	mustCode(t, err, mcpgate.ENOTFOUND)
	_, err = s.FinishTask(ctx, task.ID, mcpgate.TaskEnd{Status: mcpgate.TaskWorking})
	mustCode(t, err, mcpgate.EINVALID)

	failed := newTask("weather", "user:u1", "r1", time.Now())
	must(t, s.CreateTask(ctx, failed))
	got, err = s.FinishTask(ctx, failed.ID, mcpgate.TaskEnd{Status: mcpgate.TaskFailed, ErrorCode: mcpgate.ETIMEOUT, Error: "too slow"})
	must(t, err)
	if got.Result != nil || mcpgate.ErrorCode(got.Err()) != mcpgate.ETIMEOUT || mcpgate.ErrorMessage(got.Err()) != "too slow" {
		t.Fatalf("failed = %+v, err %v", got, got.Err())
	}
}

// testTaskConcurrentEnds ends one task from many goroutines at once (a
// cancel racing the call's own end): exactly one wins.
func testTaskConcurrentEnds(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	task := newTask("weather", "user:u1", "r1", time.Now())
	must(t, s.CreateTask(ctx, task))
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := range 8 {
		wg.Go(func() {
			status := mcpgate.TaskCompleted
			if i%2 == 1 {
				status = mcpgate.TaskCancelled
			}
			_, err := s.FinishTask(ctx, task.ID, mcpgate.TaskEnd{Status: status})
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				wins++
			} else if mcpgate.ErrorCode(err) != mcpgate.ECONFLICT {
				t.Errorf("end: %v", err)
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d ends won; want exactly 1", wins)
	}
}

func testTaskList(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	alice := mustUser(t, s, "alice")
	mustAgent(t, s, "mine", alice.ID)
	base := time.Now().Add(-time.Hour)
	var ids []string
	for i := range 5 {
		agent, identity := "mine", "user:bob"
		if i%2 == 1 {
			agent, identity = "other", "user:carol"
		}
		task := newTask(agent, identity, "r1", base.Add(time.Duration(i)*time.Second))
		must(t, s.CreateTask(ctx, task))
		ids = append(ids, task.ID)
	}
	_, err := s.FinishTask(ctx, ids[4], mcpgate.TaskEnd{Status: mcpgate.TaskCompleted})
	must(t, err)
	mustTaskIDs(t, s, mcpgate.TaskFilter{}, ids[4], ids[3], ids[2], ids[1], ids[0])
	mustTaskIDs(t, s, mcpgate.TaskFilter{OwnerID: alice.ID}, ids[4], ids[2], ids[0])
	mustTaskIDs(t, s, mcpgate.TaskFilter{Identity: "user:carol"}, ids[3], ids[1])
	mustTaskIDs(t, s, mcpgate.TaskFilter{OwnerID: alice.ID, Identity: "user:carol"}, ids[4], ids[3], ids[2], ids[1], ids[0])
	mustTaskIDs(t, s, mcpgate.TaskFilter{AgentID: "mine", Status: mcpgate.TaskWorking}, ids[2], ids[0])
	page, next, err := s.ListTasks(ctx, mcpgate.TaskFilter{Limit: 2})
	must(t, err)
	if len(page) != 2 || next == "" {
		t.Fatalf("first page: %d tasks, next %q", len(page), next)
	}
	mustTaskIDs(t, s, mcpgate.TaskFilter{Cursor: next}, ids[2], ids[1], ids[0])
	_, _, err = s.ListTasks(ctx, mcpgate.TaskFilter{Cursor: "!!"})
	mustCode(t, err, mcpgate.EINVALID)
}

// mustTaskIDs fails unless f lists exactly ids, in order.
func mustTaskIDs(tb testing.TB, s mcpgate.Store, f mcpgate.TaskFilter, ids ...string) {
	tb.Helper()
	tasks, _, err := s.ListTasks(context.Background(), f)
	must(tb, err)
	var got []string
	for _, task := range tasks {
		got = append(got, task.ID)
	}
	mustEqual(tb, "task ids", got, ids)
}

func testTaskByKey(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	now := time.Now()
	old := newTask("weather", "user:u1", "r1", now.Add(-2*time.Hour))
	old.IdempotencyKey = "k1"
	must(t, s.CreateTask(ctx, old))
	_, err := s.FindTaskByKey(ctx, "user:u1", "weather", "k1", now)
	mustCode(t, err, mcpgate.ENOTFOUND) // expired
	fresh := newTask("weather", "user:u1", "r1", now)
	fresh.IdempotencyKey = "k1"
	must(t, s.CreateTask(ctx, fresh))
	got, err := s.FindTaskByKey(ctx, "user:u1", "weather", "k1", now)
	must(t, err)
	if got.ID != fresh.ID {
		t.Fatalf("by key = %s; want %s", got.ID, fresh.ID)
	}
	_, err = s.FindTaskByKey(ctx, "user:u2", "weather", "k1", now)
	mustCode(t, err, mcpgate.ENOTFOUND)
	_, err = s.FindTaskByKey(ctx, "user:u1", "weather", "", now)
	mustCode(t, err, mcpgate.ENOTFOUND)
}

func testTaskStale(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	start := time.Now().Add(-time.Minute)
	gone := newTask("weather", "user:u1", "r-gone", start)
	alive := newTask("weather", "user:u1", "r-alive", start)
	mine := newTask("weather", "user:u1", "r-me", start)
	for _, task := range []*mcpgate.Task{gone, alive, mine} {
		must(t, s.CreateTask(ctx, task))
	}
	now := time.Now()
	must(t, s.HeartbeatTasks(ctx, "r-alive", now))
	failed, err := s.FailStaleTasks(ctx, now.Add(-10*time.Second), "r-me", "the gateway restarted", now)
	must(t, err)
	if len(failed) != 1 || failed[0].ID != gone.ID || failed[0].Status != mcpgate.TaskFailed ||
		failed[0].StatusMessage != "the gateway restarted" || failed[0].ErrorCode != mcpgate.EUNAVAILABLE {
		t.Fatalf("failed = %+v; want only the task of the runner that is gone", failed)
	}
	for _, task := range []*mcpgate.Task{alive, mine} {
		got, err := s.FindTask(ctx, task.ID)
		must(t, err)
		if got.Status != mcpgate.TaskWorking {
			t.Errorf("task of %s = %s; want working", task.Runner, got.Status)
		}
	}
}

func testTaskExpire(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	now := time.Now()
	old := newTask("weather", "user:u1", "r1", now.Add(-2*time.Hour))
	fresh := newTask("weather", "user:u1", "r1", now)
	must(t, s.CreateTask(ctx, old))
	must(t, s.CreateTask(ctx, fresh))
	n, err := s.DeleteExpiredTasks(ctx, now, 10)
	must(t, err)
	if n != 1 {
		t.Fatalf("deleted %d; want 1", n)
	}
	_, err = s.FindTask(ctx, old.ID)
	mustCode(t, err, mcpgate.ENOTFOUND)
	_, err = s.FindTask(ctx, fresh.ID)
	must(t, err)
}

func testTaskMessage(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	task := newTask("weather", "user:u1", "r1", time.Now())
	must(t, s.CreateTask(ctx, task))
	at := time.Now().UTC().Truncate(time.Microsecond)
	must(t, s.SetTaskMessage(ctx, task.ID, "waiting for approval", at))
	got, err := s.FindTask(ctx, task.ID)
	must(t, err)
	if got.StatusMessage != "waiting for approval" || !got.UpdatedAt.Equal(at) || got.Status != mcpgate.TaskWorking {
		t.Fatalf("after SetTaskMessage: %+v", got)
	}
	_, err = s.FinishTask(ctx, task.ID, mcpgate.TaskEnd{Status: mcpgate.TaskCompleted, Message: "done"})
	must(t, err)
	mustCode(t, s.SetTaskMessage(ctx, task.ID, "late", time.Now()), mcpgate.ECONFLICT)
	if got, _ := s.FindTask(ctx, task.ID); got.StatusMessage != "done" {
		t.Errorf("an ended task's message = %q; want its own", got.StatusMessage)
	}
	mustCode(t, s.SetTaskMessage(ctx, "task_missing", "x", time.Now()), mcpgate.ENOTFOUND)
}
