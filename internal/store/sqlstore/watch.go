package sqlstore

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// hub fans change notifications out to watchers, coalescing bursts.
type hub struct {
	mu   sync.Mutex
	subs map[chan struct{}]struct{}
}

func newHub() *hub { return &hub{subs: map[chan struct{}]struct{}{}} }

func (h *hub) publish() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.subs {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

func (h *hub) subscribe(ctx context.Context) <-chan struct{} {
	c := make(chan struct{}, 1)
	h.mu.Lock()
	h.subs[c] = struct{}{}
	h.mu.Unlock()
	go func() {
		<-ctx.Done()
		h.mu.Lock()
		delete(h.subs, c)
		h.mu.Unlock()
	}()
	return c
}

// Watch implements store.Store. Writes from this process are published
// directly; other processes' writes are noticed through PostgreSQL's
// LISTEN/NOTIFY or SQLite's data_version, which changes whenever another
// connection commits.
func (d *DB) Watch(ctx context.Context) <-chan struct{} {
	c := d.hub.subscribe(ctx)
	d.startForeignWatch()
	return c
}

var foreignOnce sync.Map

func (d *DB) startForeignWatch() {
	if _, loaded := foreignOnce.LoadOrStore(d, true); loaded {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-d.stop; cancel() }()
	if d.dialect == postgres {
		go d.listen(ctx)
	} else {
		// The baseline is read before Watch returns: a commit by another
		// connection right after Watch must differ from it, not become it.
		var last int64 = -1
		if err := d.db.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&last); err != nil {
			last = -1
		}
		go d.pollDataVersion(ctx, last)
	}
}

// foreignPoll is how often a SQLite store looks for another process's
// commits (PRAGMA data_version: a read of the WAL index in shared memory,
// no file I/O). It bounds how long a card added by another process (drover
// card add, the API of another drover serve) waits to be claimed.
const foreignPoll = 25 * time.Millisecond

func (d *DB) pollDataVersion(ctx context.Context, last int64) {
	t := time.NewTicker(foreignPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var v int64
		if err := d.db.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v); err != nil {
			continue
		}
		if last >= 0 && v != last {
			d.hub.publish()
		}
		last = v
	}
}

func (d *DB) listen(ctx context.Context) {
	for ctx.Err() == nil {
		conn, err := pgx.Connect(ctx, d.dsn)
		if err == nil {
			_, err = conn.Exec(ctx, `LISTEN drover_changes`)
			if err == nil {
				// Changes committed between Watch and LISTEN sent no
				// notification this connection could receive.
				d.hub.publish()
			}
			for err == nil {
				_, err = conn.WaitForNotification(ctx)
				if err == nil {
					d.hub.publish()
				}
			}
			conn.Close(context.Background())
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
			d.hub.publish() // we may have missed changes while reconnecting
		}
	}
}
