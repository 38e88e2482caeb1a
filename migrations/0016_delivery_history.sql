-- Delivery history (issue 49): what the rollouts did, kept longer than the transitions.

-- One row per domain version per cluster: when it was first offered, first applied and first
-- fully healthy, and where it stands (or stopped) with the root cause that held it. `baseline`
-- rows were found already applied when fleetglass first wrote the cluster: their times are
-- when fleetglass saw them, not a rollout it watched, so durations and DORA figures skip them.
-- Trimmed by `retention.rollouts` (a year by default) on `updated_at`.
CREATE TABLE rollouts (
    domain      text        NOT NULL,
    version     text        NOT NULL,
    cluster     text        NOT NULL,
    offered_at  timestamptz NOT NULL,
    applied_at  timestamptz,
    healthy_at  timestamptz,
    -- the first time the domain was in a problem state while this version was in flight
    problem_at  timestamptz,
    state       text        NOT NULL,
    cause       text,
    reason      text        NOT NULL DEFAULT '',
    baseline    boolean     NOT NULL DEFAULT false,
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (domain, version, cluster)
);
CREATE INDEX rollouts_by_cluster ON rollouts (domain, cluster, offered_at);
CREATE INDEX rollouts_age ON rollouts (updated_at);

-- A domain on a cluster in a problem state, from the round it entered one to the round it was
-- fully healthy again: the time to restore. Trimmed with the rollouts.
CREATE TABLE domain_outages (
    id          bigserial   PRIMARY KEY,
    domain      text        NOT NULL,
    cluster     text        NOT NULL,
    version     text,
    state       text        NOT NULL,
    reason      text        NOT NULL DEFAULT '',
    opened_at   timestamptz NOT NULL,
    resolved_at timestamptz
);
CREATE INDEX domain_outages_by_domain ON domain_outages (domain, opened_at);
CREATE UNIQUE INDEX domain_outages_open ON domain_outages (domain, cluster) WHERE resolved_at IS NULL;

-- Domain verdicts and cluster counts as they changed, for the fleet at a past time (`?at=`).
-- Trimmed with the transitions. `gone` marks a domain that left the cluster.
CREATE TABLE domain_history (
    domain        text        NOT NULL,
    cluster       text        NOT NULL,
    at            timestamptz NOT NULL,
    version       text,
    offered       text,
    state         text        NOT NULL,
    fully_healthy boolean     NOT NULL,
    objects       integer     NOT NULL,
    healthy       integer     NOT NULL,
    blockers      jsonb       NOT NULL,
    gone          boolean     NOT NULL DEFAULT false
);
CREATE INDEX domain_history_as_of ON domain_history (domain, cluster, at DESC);
CREATE INDEX domain_history_age ON domain_history USING brin (at);
-- Every (domain, cluster) pair the history holds: the as-of read looks each up by index
-- instead of scanning the history.
CREATE TABLE domain_history_keys (
    domain  text NOT NULL,
    cluster text NOT NULL,
    PRIMARY KEY (domain, cluster)
);

CREATE TABLE cluster_history (
    cluster      text        NOT NULL,
    at           timestamptz NOT NULL,
    state_counts jsonb       NOT NULL,
    error        text
);
CREATE INDEX cluster_history_as_of ON cluster_history (cluster, at DESC);
CREATE INDEX cluster_history_age ON cluster_history USING brin (at);

-- What an existing install holds now starts the history, so a past time after this upgrade
-- finds every cluster and domain as last written (before it: not yet listed, unverifiable).
INSERT INTO cluster_history (cluster, at, state_counts, error)
SELECT name, updated_at, state_counts, error FROM clusters;
INSERT INTO domain_history (domain, cluster, at, version, offered, state, fully_healthy, objects, healthy, blockers)
SELECT domain, cluster, updated_at, version, offered, state, fully_healthy, objects, healthy, blockers
FROM domain_verdicts;
INSERT INTO domain_history_keys (domain, cluster) SELECT domain, cluster FROM domain_verdicts;
