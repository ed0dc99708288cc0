package sqlstore

// Rows found by their key first. A generic plan made while a table was
// empty, as pgx's cached statements of a new database are, may answer a
// key's condition beside others through the index of the others, and so
// read every row of that index's range: a decision on an approval
// scanned every pending approval (approvals_state_deadline), the lookups
// of an idempotency key every approval of its agent or task of its
// caller, and a renewal, release or acknowledgement of held messages all
// of the agent's messages (messages_agent_id_seq_key). With a tuple ID
// column (see TupleIDer) the Store finds such rows by their key alone
// first, in a materialized WITH clause, and reaches them through their
// tuple IDs, a plan no statistics of the table turn into a scan of a
// range. Without one the statements are as they would be written by
// hand.

// keyedRows returns a WITH clause that materializes as k(t) the tuple IDs
// (column tid) of the rows of table where key holds.
func keyedRows(tid, table, key string) string {
	return `WITH k AS MATERIALIZED (SELECT ` + tid + ` AS t FROM ` + table + ` WHERE ` + key + `) `
}

// updateByKey returns "UPDATE <table> SET <set> WHERE <key> AND <cond>"
// followed by tail. With a tuple ID column tid it finds the rows by key
// alone and updates those where cond holds through tid. A row another
// transaction updates between the two is left, its new version having
// another tuple ID; every caller's cond no longer holds for it then
// either (it was decided, or a message was acknowledged or delivered
// anew).
func updateByKey(tid, table, set, key, cond, tail string) string {
	if tid == "" {
		return `UPDATE ` + table + ` SET ` + set + ` WHERE ` + key + ` AND ` + cond + tail
	}
	return keyedRows(tid, table, key) + `UPDATE ` + table + ` SET ` + set + ` FROM k WHERE ` + tid + ` = k.t AND ` + cond + tail
}

// selectByKey returns "SELECT <cols> FROM <table> WHERE <key>" followed by
// tail (an ORDER BY, a LIMIT). With a tuple ID column tid it finds the
// rows by key first and reads them through tid; one statement's snapshot
// sees the same versions in both.
func selectByKey(tid, table, cols, key, tail string) string {
	if tid == "" {
		return `SELECT ` + cols + ` FROM ` + table + ` WHERE ` + key + tail
	}
	return keyedRows(tid, table, key) + `SELECT ` + cols + ` FROM ` + table + ` JOIN k ON ` + tid + ` = k.t` + tail
}
