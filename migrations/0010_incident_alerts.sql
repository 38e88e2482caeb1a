-- One alert per incident instead of one per root cause: the same cause on several clusters
-- (same kind, namespace, name and normalised reason) is one alert, keyed by the incident key,
-- whose clusters join and leave while it is open. `members` holds the root cause on each
-- cluster as last evaluated, so a collector that evaluates only some of the clusters keeps
-- the others'; `clusters` is their names (after it cleared, the last ones) for locking.
ALTER TABLE alerts
    ADD COLUMN incident_key text,
    ADD COLUMN clusters     text[] NOT NULL DEFAULT '{}',
    ADD COLUMN members      jsonb  NOT NULL DEFAULT '[]';

-- Alerts from before are keyed by their root cause; the dispatcher moves an open one to its
-- incident's key on the next round (it finds its root cause there) instead of resolving it.
UPDATE alerts SET incident_key = root_cause, clusters = ARRAY[cluster];
UPDATE alerts SET members = jsonb_build_array(jsonb_build_object(
        'root_cause', root_cause, 'cluster', cluster, 'state', state, 'since', since,
        'reason', reason, 'message', message, 'affected_count', affected_count,
        'affected_sample', affected_sample, 'domains', domains))
    WHERE status <> 'resolved' AND cleared_at IS NULL;
ALTER TABLE alerts ALTER COLUMN incident_key SET NOT NULL;

DROP INDEX alerts_one_open_per_root_cause;
CREATE UNIQUE INDEX alerts_one_open_per_incident ON alerts (incident_key) WHERE status <> 'resolved';
DROP INDEX alerts_open_by_cluster;
CREATE INDEX alerts_open_by_clusters ON alerts USING gin (clusters) WHERE status <> 'resolved';
