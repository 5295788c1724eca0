package testdb

import "context"

// TurnKey is the advisory lock a test binary holds while it uses the database.
const TurnKey = turnKey

// AwaitTurnApart waits for the turn as another test binary would, until
// it holds it or ctx ends.
func AwaitTurnApart(ctx context.Context, base string) error {
	var h turnHolder
	return h.await(ctx, base)
}
