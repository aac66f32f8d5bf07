package notify_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/notify"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

// ownPublicAddr is an address of this machine that is neither loopback nor
// private, or "" when it has none.
func ownPublicAddr() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsPrivate() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}

// A webhook to the machine's own non-loopback address reaches its own
// services as loopback does: with allow_private false it is refused at load
// and never delivered (issue 13, rough edge).
func TestWebhookToOwnAddressRefusedWithoutAllowPrivate(t *testing.T) {
	ip := ownPublicAddr()
	if ip == "" {
		t.Skip("this machine has no public non-loopback address to test with")
	}
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("cannot listen on %s: %v", ip, err)
	}
	hits := make(chan struct{}, 10)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits <- struct{}{} })}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/hook"
	if err := notify.CheckURL(url, false); err == nil || !strings.Contains(err.Error(), "own") {
		t.Fatalf("CheckURL(%s) = %v; want a refusal naming this machine's own address", url, err)
	}
	st := testkit.Store(t, testkit.SQLite)
	clk := testkit.NewClock(time.Now())
	cfg := notify.Config{Webhook: notify.Webhook{URL: url}}
	if err := st.Apply(context.Background(), store.Change{Outbox: notify.Enqueue(cfg, gaveUp(clk.Now()))}); err != nil {
		t.Fatal(err)
	}
	w := &notify.Worker{Store: st, Config: func() notify.Config { return cfg }, Now: clk.Now}
	if _, _, err := w.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hits:
		t.Fatal("the webhook reached this machine's own address with allow_private false")
	default:
	}
}
