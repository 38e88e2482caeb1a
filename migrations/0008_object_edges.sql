-- The graph as the engine walked it, stored with each verdict: [{"kind": "depends_on", "target":
-- "cluster/Kind/namespace/name"}, …]. Pages read it instead of re-deriving dependsOn, sources,
-- health checks and controllers, so they agree with the root causes; "what waits on X" is one
-- containment query on the GIN index.
ALTER TABLE objects ADD COLUMN edges jsonb NOT NULL DEFAULT '[]';
CREATE INDEX objects_edges ON objects USING gin (edges jsonb_path_ops);

-- The Flux controller Deployments the engine matched on each cluster (ids, any namespace, every
-- shard), and those its objects need that are absent.
ALTER TABLE clusters ADD COLUMN controllers jsonb NOT NULL DEFAULT '[]';
