-- Delivery no longer holds a transaction across an HTTP call: a worker claims a notification
-- (claimed_until, a lease) and commits, sends, then records the outcome in a second
-- transaction. A worker that dies mid-send leaves the claim to expire and the notification is
-- sent again (at least once). `claims` counts claims: a claim that finds more claims than
-- recorded attempts knows an earlier send may have gone out, and a sink that can look for it
-- (Slack with a bot token) does so before sending again.
ALTER TABLE alert_outbox
    ADD COLUMN claimed_until timestamptz,
    ADD COLUMN claims integer NOT NULL DEFAULT 0;

-- One delivery worker per sink claims from its own queue.
CREATE INDEX alert_outbox_due_by_sink ON alert_outbox (sink, next_attempt_at, id) WHERE status = 'pending';
