package board

// WaitPath reports how the card with id from waits, through the blocked_by
// of the cards get returns, on the card with id target: the identifiers of
// the chain from from to the card that names target, or nil when it does
// not wait on it. get returns ok false for a card that does not exist. The
// walk stops after limit cards, so a huge board cannot make it unbounded.
func WaitPath(from, target string, get func(id string) (Card, bool, error)) ([]string, error) {
	const limit = 10000
	type step struct {
		c    Card
		path []string
	}
	first, ok, err := get(from)
	if err != nil || !ok {
		return nil, err
	}
	seen := map[string]bool{from: true}
	queue := []step{{first, []string{first.Identifier}}}
	for len(queue) > 0 && len(seen) < limit {
		cur := queue[0]
		queue = queue[1:]
		for _, id := range cur.c.BlockedBy {
			if id == target {
				return cur.path, nil
			}
			if seen[id] {
				continue
			}
			seen[id] = true
			next, ok, err := get(id)
			if err != nil {
				return nil, err
			}
			if ok {
				queue = append(queue, step{next, append(append([]string{}, cur.path...), next.Identifier)})
			}
		}
	}
	return nil, nil
}
