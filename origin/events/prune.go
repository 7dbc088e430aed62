package events

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// pruneBatch is how many events one DELETE removes.
const pruneBatch = 5000

// pruneLoop prunes now and then every PruneInterval until ctx ends.
func (h *Hub) pruneLoop(ctx context.Context) {
	t := time.NewTicker(h.cfg.PruneInterval)
	defer t.Stop()
	for {
		if n, err := h.Prune(ctx); err != nil && ctx.Err() == nil {
			h.log.Warn("events: prune failed", "err", err)
		} else if n > 0 {
			h.log.Info("events: pruned", "events", n, "retention", h.cfg.Retention.String())
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// Prune deletes the events older than the retention and returns how many
// it deleted. What goes is a prefix of the outbox: every id up to the
// newest expired one. The watermark that tells streams an id was pruned
// (event_stream_state) is raised first, in its own transaction, so a stream
// never misses a deleted event without being told to reset. Safe to run from
// several origins at once.
func (h *Hub) Prune(ctx context.Context) (int64, error) {
	var through int64
	err := h.db.InTx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM events
			WHERE created_at < now() - make_interval(secs => $1)`, h.cfg.Retention.Seconds()).Scan(&through)
		if err != nil || through == 0 {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE event_stream_state SET pruned_through = greatest(pruned_through, $1)`, through)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("events: prune: %w", err)
	}
	if through == 0 {
		return 0, nil
	}
	var total int64
	for {
		tag, err := h.db.Pool.Exec(ctx, `DELETE FROM events WHERE id IN
			(SELECT id FROM events WHERE id <= $1 ORDER BY id LIMIT $2)`, through, pruneBatch)
		if err != nil {
			return total, fmt.Errorf("events: prune: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < pruneBatch {
			metricPruned.Add(int(total))
			return total, nil
		}
	}
}
