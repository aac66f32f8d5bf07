package server_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestEventStream(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", h.srv.URL+"/api/v1/events/stream", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	wait := func(pred func(string) bool, what string) {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("stream ended before %s", what)
				}
				if pred(l) {
					return
				}
			case <-ctx.Done():
				t.Fatalf("no %s on the stream", what)
			}
		}
	}
	wait(func(l string) bool { return l == ": connected" }, "connected comment")
	h.want(h.do("POST", "/api/v1/cards/"+h.w.Blocked.Identifier+"/resume", nil), 200)
	wait(func(l string) bool { return strings.HasPrefix(l, "data: ") && strings.Contains(l, `"type":"resumed"`) }, "resumed event")
	wait(func(l string) bool { return l == ": ping" }, "heartbeat")

	// Resuming from a cursor replays what came after it.
	req2, _ := http.NewRequestWithContext(ctx, "GET", h.srv.URL+"/api/v1/events/stream?since=0&card="+h.w.Parked.Identifier, nil)
	res2, err := http.DefaultClient.Do(req2)
	if err != nil {
		t.Fatal(err)
	}
	defer res2.Body.Close()
	sc := bufio.NewScanner(res2.Body)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"type":"parked"`) {
			return
		}
	}
	t.Fatal("replay from since=0 lacked the parked event")
}
