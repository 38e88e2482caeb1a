-- A domain's version on a cluster is the one applied; what its source offers beyond it is
-- pending and stored beside it (NULL: nothing pending), so cells, pages, `wait` and alerts can
-- say "v3.1.9 → v3.2.0" instead of showing the offered version as if it ran.
ALTER TABLE domain_verdicts ADD COLUMN offered text;
