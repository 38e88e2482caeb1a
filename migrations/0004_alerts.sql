-- Alerts: one row per root-cause episode (at most one open per root cause, so two collectors
-- cannot double-open it), the notifications in an outbox written in the same transaction as the
-- alert change (the delivery worker drains it), and silences.

CREATE TABLE silences (
    id          bigserial   PRIMARY KEY,
    root_cause  text,
    domain      text,
    cluster     text,
    until       timestamptz NOT NULL,
    comment     text        NOT NULL,
    created_by  text        NOT NULL,
    created_at  timestamptz NOT NULL,
    CHECK (root_cause IS NOT NULL OR domain IS NOT NULL OR cluster IS NOT NULL)
);
CREATE INDEX silences_until ON silences (until);

CREATE TABLE alerts (
    id               bigserial   PRIMARY KEY,
    root_cause       text        NOT NULL,
    cluster          text        NOT NULL,
    rule             text        NOT NULL,
    severity         text        NOT NULL,
    status           text        NOT NULL CHECK (status IN ('pending', 'firing', 'resolved')),
    state            text        NOT NULL,
    reason           text        NOT NULL,
    message          text        NOT NULL,
    since            timestamptz,
    affected_count   integer     NOT NULL,
    affected_sample  jsonb       NOT NULL,
    domains          jsonb       NOT NULL,
    first_seen       timestamptz NOT NULL,
    fired_at         timestamptz,
    -- when the root cause disappeared; the resolve waits out the flap window
    cleared_at       timestamptz,
    resolved_at      timestamptz,
    -- a firing notification was queued for sending (false while silenced)
    notified         boolean     NOT NULL DEFAULT false,
    last_notified_at timestamptz,
    silence_id       bigint      REFERENCES silences (id) ON DELETE SET NULL,
    -- the Slack message to edit and thread under (bot mode), set by the delivery worker
    slack_channel    text,
    slack_ts         text,
    updated_at       timestamptz NOT NULL
);
CREATE UNIQUE INDEX alerts_one_open_per_root_cause ON alerts (root_cause) WHERE status <> 'resolved';
CREATE INDEX alerts_open_by_cluster ON alerts (cluster) WHERE status <> 'resolved';
CREATE INDEX alerts_resolved ON alerts (resolved_at DESC) WHERE status = 'resolved';

CREATE TABLE alert_outbox (
    id              bigserial   PRIMARY KEY,
    alert_id        bigint      NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
    sink            text        NOT NULL,
    event           text        NOT NULL CHECK (event IN ('firing', 'update', 'renotify', 'resolved')),
    -- the alert as it was when the event happened; rendered per sink at delivery
    payload         jsonb       NOT NULL,
    status          text        NOT NULL CHECK (status IN ('pending', 'delivered', 'silenced')),
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    last_error      text,
    created_at      timestamptz NOT NULL,
    delivered_at    timestamptz
);
CREATE INDEX alert_outbox_due ON alert_outbox (next_attempt_at) WHERE status = 'pending';
CREATE INDEX alert_outbox_by_alert ON alert_outbox (alert_id, sink, id);
