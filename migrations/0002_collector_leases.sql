-- Collector sharding: each cluster is collected by the one replica holding its lease. A replica
-- renews its leases and its heartbeat every third of the lease period; one that dies loses both.

CREATE TABLE collector_leases (
    cluster     text        PRIMARY KEY,
    holder      text        NOT NULL,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX collector_leases_holder ON collector_leases (holder);

-- Live collector replicas, so each takes at most its fair share of the clusters.
CREATE TABLE collector_heartbeats (
    holder      text        PRIMARY KEY,
    expires_at  timestamptz NOT NULL
);
