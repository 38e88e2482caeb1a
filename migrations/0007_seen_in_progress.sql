-- When the collector first saw each object in progress, for work that carries no start time of
-- its own (a generation not yet observed and no Reconciling condition, a partial rollout). Kept
-- so a restart does not reopen the window before such work can be called stuck. A row exists
-- only while its object is in progress.
CREATE TABLE seen_in_progress (
    id       text        PRIMARY KEY,  -- cluster/Kind/namespace/name
    cluster  text        NOT NULL,
    since    timestamptz NOT NULL
);
CREATE INDEX seen_in_progress_cluster ON seen_in_progress (cluster);
