package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Matching the leads a scenario sent (leads, wordpress-mix) to their rows.

// sentLead is one lead sent and what came back.
type sentLead struct {
	email     string
	id        int64
	acked     bool
	duplicate bool
}

// leadRowCheck is what Postgres says of the leads a scenario sent.
type leadRowCheck struct {
	Sent       int `json:"sent"`
	Acked      int `json:"acknowledged"`
	Matched    int `json:"acknowledged_and_stored"`
	Missing    int `json:"acknowledged_missing"`
	Duplicates int `json:"acknowledged_as_duplicate"`
	Unacked    int `json:"not_acknowledged"`
	Stored     int `json:"rows"`
}

func (c leadRowCheck) String() string {
	return fmt.Sprintf("%d sent, %d acknowledged (201), %d of them matched to their row, %d missing, %d answered as duplicates; %d rows for %d unacknowledged",
		c.Sent, c.Acked, c.Matched, c.Missing, c.Duplicates, c.Stored-c.Matched, c.Unacked)
}

func (c leadRowCheck) err() error {
	switch {
	case c.Acked == 0:
		return fmt.Errorf("no lead was acknowledged (%d sent)", c.Sent)
	case c.Missing > 0:
		return fmt.Errorf("%d acknowledged leads missing from Postgres", c.Missing)
	case c.Duplicates > 0:
		return fmt.Errorf("%d new enquiries answered as duplicates", c.Duplicates)
	}
	return nil
}

// checkLeadRows matches every 201 to its row: the lead id the answer
// gave, with the e-mail that was sent (each starts with prefix), on site.
func checkLeadRows(ctx context.Context, dbURL, site, prefix string, sent []sentLead) (leadRowCheck, error) {
	c := leadRowCheck{Sent: len(sent)}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return c, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT id, email FROM leads WHERE site_id = $1 AND email LIKE $2`, site, prefix+"%")
	if err != nil {
		return c, err
	}
	stored := map[int64]string{}
	for rows.Next() {
		var id int64
		var email string
		if err := rows.Scan(&id, &email); err != nil {
			return c, err
		}
		stored[id] = email
	}
	if err := rows.Err(); err != nil {
		return c, err
	}
	c.Stored = len(stored)
	for _, l := range sent {
		if !l.acked {
			c.Unacked++
			continue
		}
		c.Acked++
		if l.duplicate {
			c.Duplicates++
		}
		if stored[l.id] == l.email {
			c.Matched++
		} else {
			c.Missing++
		}
	}
	return c, nil
}
