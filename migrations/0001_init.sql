-- Current state, history and roll-ups. Web replicas only read these tables; collectors write
-- them (each collector only for the clusters it holds a lease on).

CREATE TABLE clusters (
    name          text PRIMARY KEY,
    labels        jsonb       NOT NULL DEFAULT '{}',
    last_good     timestamptz,
    error         text,
    kind_errors   jsonb       NOT NULL DEFAULT '{}',
    -- objects by state, so the fleet page never scans the objects table
    state_counts  jsonb       NOT NULL DEFAULT '{}',
    updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE objects (
    cluster      text        NOT NULL,
    kind         text        NOT NULL,
    namespace    text        NOT NULL,
    name         text        NOT NULL,
    state        text        NOT NULL,
    since        timestamptz,
    reason       text        NOT NULL,
    message      text        NOT NULL,
    root_causes  jsonb       NOT NULL DEFAULT '[]',
    -- the slim object as last seen (conditions, revisions, references)
    body         jsonb       NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (cluster, kind, namespace, name)
);
CREATE INDEX objects_state ON objects (state);
CREATE INDEX objects_kind ON objects (kind);
CREATE INDEX objects_name ON objects (name);

CREATE TABLE transitions (
    id          bigserial   PRIMARY KEY,
    cluster     text        NOT NULL,
    kind        text        NOT NULL,
    namespace   text        NOT NULL,
    name        text        NOT NULL,
    from_state  text,
    to_state    text        NOT NULL,
    reason      text        NOT NULL,
    message     text        NOT NULL,
    at          timestamptz NOT NULL
);
CREATE INDEX transitions_object ON transitions (cluster, kind, namespace, name, at);
CREATE INDEX transitions_at ON transitions (at);

CREATE TABLE root_causes (
    id          text        PRIMARY KEY,
    cluster     text        NOT NULL,
    state       text        NOT NULL,
    since       timestamptz,
    reason      text        NOT NULL,
    message     text        NOT NULL,
    affected    jsonb       NOT NULL,
    updated_at  timestamptz NOT NULL
);
CREATE INDEX root_causes_cluster ON root_causes (cluster);

CREATE TABLE domain_verdicts (
    domain        text        NOT NULL,
    cluster       text        NOT NULL,
    version       text,
    state         text        NOT NULL,
    fully_healthy boolean     NOT NULL,
    objects       integer     NOT NULL,
    healthy       integer     NOT NULL,
    blockers      jsonb       NOT NULL,
    updated_at    timestamptz NOT NULL,
    PRIMARY KEY (domain, cluster)
);
