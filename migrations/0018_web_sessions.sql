-- Browser sessions of people signed in through an OpenID provider (issue 48): kept here, not in
-- the cookie, so one can be listed and revoked. The cookie holds a random secret; only its
-- sha256 is stored. A session ends at expires_at (the configured lifetime, or sooner when the
-- provider's ID token expires) or when revoked.
CREATE TABLE web_sessions (
    id_hash    bytea       PRIMARY KEY,
    username   text        NOT NULL,
    subject    text        NOT NULL,
    issuer     text        NOT NULL,
    groups     text[]      NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz,
    source     text        NOT NULL DEFAULT ''
);
CREATE INDEX web_sessions_username ON web_sessions (username);
CREATE INDEX web_sessions_expiry ON web_sessions (expires_at);

-- Sign-ins sent to the provider and not back yet: what the callback must match (state, by its
-- sha256), the nonce the ID token must carry and the PKCE verifier. Each is taken once.
CREATE TABLE oidc_logins (
    state_hash    bytea       PRIMARY KEY,
    nonce         text        NOT NULL,
    pkce_verifier text        NOT NULL,
    next          text        NOT NULL,
    created_at    timestamptz NOT NULL
);
CREATE INDEX oidc_logins_created ON oidc_logins (created_at);
