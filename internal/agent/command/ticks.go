package command

import (
	"sync"
	"time"
)

// ticks reports every running watcher's progress from one ticker and one
// goroutine for the whole process, rather than a ticker and a goroutine
// per agent: with thousands of agents at once, a timer each woke the
// scheduler thousands of times every ProgressInterval, mostly to find
// nothing new. The goroutine runs while a watcher is registered.
var ticks = &tickHub{every: ProgressInterval}

type tickHub struct {
	every time.Duration

	// pass is held through each pass over the watchers and by remove, so
	// that once remove returns no pass reports the watcher it removed.
	// Taken before mu.
	pass    sync.Mutex
	mu      sync.Mutex // guards ws and running
	ws      map[*watcher]struct{}
	running bool
}

func (h *tickHub) add(w *watcher) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ws == nil {
		h.ws = map[*watcher]struct{}{}
	}
	h.ws[w] = struct{}{}
	if !h.running {
		h.running = true
		go h.loop()
	}
}

// remove unregisters w; once it returns, w's fn is not called by a pass.
func (h *tickHub) remove(w *watcher) {
	h.pass.Lock()
	defer h.pass.Unlock()
	h.mu.Lock()
	delete(h.ws, w)
	h.mu.Unlock()
}

func (h *tickHub) loop() {
	t := time.NewTicker(h.every)
	defer t.Stop()
	var batch []*watcher
	for range t.C {
		h.pass.Lock()
		h.mu.Lock()
		if len(h.ws) == 0 {
			h.running = false
			h.mu.Unlock()
			h.pass.Unlock()
			return
		}
		batch = batch[:0]
		for w := range h.ws {
			batch = append(batch, w)
		}
		h.mu.Unlock()
		for _, w := range batch {
			if p, ok := w.snapshot(false); ok {
				w.fn(p)
			}
		}
		h.pass.Unlock()
		clear(batch)
	}
}
