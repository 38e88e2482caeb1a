-- An object's body is the slim object as the collector serialised it: the pages read it whole
-- and decode it themselves, and Postgres looks inside it in one query only (the domain hint on
-- `/`, for a fleet without domains). As jsonb, every verdict change paid for parsing the body
-- into jsonb's tree, and comparing it with the stored one, on the collector's hot path. As
-- text it is stored as sent and compared byte for byte: in psql, upserting 5,000 changed
-- Kustomizations of 550-character bodies into the 201,000-row table of the growth bench took
-- 29-36 ms instead of 48-56 (docs/PERFORMANCE.md §9.19).
-- The change rewrites the table once (2 s for 201,000 rows here).
ALTER TABLE objects ALTER COLUMN body TYPE text USING body::text;
