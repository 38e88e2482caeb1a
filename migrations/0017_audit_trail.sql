-- Every write made through fleetglass (issue 48): sign-ins and sign-outs, refused sign-ins,
-- silences set and expired, the access policy when it changed at start-up. Who (as
-- authentication established it), what, on what, when and from where. Trimmed by
-- `retention.audit` (a year by default).
CREATE TABLE audit_events (
    id      bigserial   PRIMARY KEY,
    at      timestamptz NOT NULL,
    actor   text        NOT NULL,
    action  text        NOT NULL,
    subject text        NOT NULL DEFAULT '',
    detail  text        NOT NULL DEFAULT '',
    source  text        NOT NULL DEFAULT ''
);
CREATE INDEX audit_events_at ON audit_events (at);
CREATE INDEX audit_events_policy ON audit_events (id) WHERE action = 'policy-changed';
