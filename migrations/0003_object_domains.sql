-- Which domains each object belongs to (computed by the runner from the configured domain
-- selections), so the API and pages can filter objects by domain with an index.
ALTER TABLE objects ADD COLUMN domains text[] NOT NULL DEFAULT '{}';
CREATE INDEX objects_domains ON objects USING gin (domains);
