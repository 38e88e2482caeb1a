-- Browser sign-ins ended by signing out, kept until they would have expired anyway: the
-- sign-in cookie is signed, not stored, so only this list can end one before its expiry.
CREATE TABLE revoked_sign_ins (
    id text PRIMARY KEY,
    expires_at timestamptz NOT NULL
);
CREATE INDEX revoked_sign_ins_expiry ON revoked_sign_ins (expires_at);
