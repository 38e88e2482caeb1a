-- A status change rewrites an object's row. Postgres can write the new row version on the same
-- page without touching any index (a HOT update) only when no indexed column changed and the
-- page has room; an update that cannot adds an entry to each of the table's six indexes, which
-- was half of the collector's write at 1,000 clusters (docs/PERFORMANCE.md §9.16).
--
-- `state` changes with every verdict change, so its index made every such update a full one.
-- The objects list is its only reader (filtered by state and ordered by key): it now walks the
-- primary key and filters, which costs the same for the common problem states and more for a
-- rare state on a very large fleet.
DROP INDEX IF EXISTS objects_state;

-- Room on each page for the next version of its rows. Pages written before this keep theirs
-- full until they are rewritten.
ALTER TABLE objects SET (fillfactor = 70);

-- Transitions are appended in time order and `at` is read only by retention's range delete: a
-- block-range index costs next to nothing per insert, where the B-tree cost an entry per row.
DROP INDEX IF EXISTS transitions_at;
CREATE INDEX transitions_at ON transitions USING brin (at);
