-- A root cause's cause as fields (issue 46): a code and the parameters that identify it.
-- Incidents and alerts key on it, never on the reason's words. Rows written before read as
-- 'unrecorded' until their collector's next round rewrites them (a row whose cause differs
-- is rewritten); open alerts keyed the old way move to the new key through the root cause
-- they hold (alerts::grouping::adopted_key), without resolving or paging again.
ALTER TABLE root_causes ADD COLUMN cause jsonb NOT NULL DEFAULT '{"code": "unrecorded"}';
ALTER TABLE resolved_root_causes ADD COLUMN cause jsonb NOT NULL DEFAULT '{"code": "unrecorded"}';
