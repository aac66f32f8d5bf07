package board

import (
	"crypto/rand"
	"strings"
	"sync"

	"github.com/oklog/ulid/v2"
)

// ids is the one source of record ids in the process.
var ids = struct {
	mu      sync.Mutex
	lastMs  uint64
	entropy *ulid.MonotonicEntropy
}{entropy: ulid.Monotonic(rand.Reader, 0)}

// NewID returns a new id for a board record (card, run, comment, outbox row):
// a lower-case ULID. It is safe for concurrent use, and every id it returns
// sorts after the ones it returned before in this process, even within one
// millisecond or when the wall clock steps back.
func NewID() string {
	ids.mu.Lock()
	defer ids.mu.Unlock()
	ids.lastMs = max(ids.lastMs, ulid.Now())
	return strings.ToLower(ulid.MustNew(ids.lastMs, ids.entropy).String())
}
