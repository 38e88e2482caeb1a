-- Root causes that cleared: written when a cluster's roll-ups are replaced without a root cause
-- it had, so the pages can list recently resolved incidents. Trimmed with the transitions.
CREATE TABLE resolved_root_causes (
    id           bigserial   PRIMARY KEY,
    root_cause   text        NOT NULL,  -- cluster/Kind/namespace/name
    cluster      text        NOT NULL,
    state        text        NOT NULL,
    since        timestamptz,
    reason       text        NOT NULL,
    resolved_at  timestamptz NOT NULL
);
CREATE INDEX resolved_root_causes_at ON resolved_root_causes (resolved_at);
