-- Kubernetes Warning events about the objects fleetglass tracks and their pods: the evidence
-- shown beside a verdict. Bounded: at most a few per object (trimmed on write) and a day old
-- (the hourly retention pass).
CREATE TABLE warning_events (
    cluster text NOT NULL,
    uid text NOT NULL,
    kind text NOT NULL,
    namespace text NOT NULL,
    name text NOT NULL,
    reason text NOT NULL,
    note text NOT NULL,
    count integer NOT NULL,
    last_seen timestamptz NOT NULL,
    reporter text NOT NULL,
    PRIMARY KEY (cluster, uid)
);
CREATE INDEX warning_events_object ON warning_events (cluster, kind, namespace, name, last_seen DESC);
CREATE INDEX warning_events_age ON warning_events (last_seen);
