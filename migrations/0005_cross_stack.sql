-- Cross-stack dependencies (who provides what, who consumes it) and the history of who provided
-- each CRD, so a CRD that vanishes can be traced to the stack that removed it.

CREATE TABLE dependencies (
    cluster   text NOT NULL,
    provider  text NOT NULL,
    consumer  text NOT NULL,
    object    text NOT NULL,
    PRIMARY KEY (cluster, provider, consumer, object)
);
CREATE INDEX dependencies_provider ON dependencies (provider);

CREATE TABLE co_ownerships (
    cluster    text  NOT NULL,
    object     text  NOT NULL,
    providers  jsonb NOT NULL,
    PRIMARY KEY (cluster, object)
);

CREATE TABLE crd_providers (
    cluster    text        NOT NULL,
    crd_group  text        NOT NULL,
    crd_kind   text        NOT NULL,
    crd        text        NOT NULL,
    provider   text        NOT NULL,
    last_seen  timestamptz NOT NULL,
    PRIMARY KEY (cluster, crd_group, crd_kind)
);
