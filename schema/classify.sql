-- classify: set kernel_names.family and .category from the classifier rules
-- (classifier_rules, family_categories; migrations/0002_classifier.sql).
--
-- Rows considered: those not classified yet (family or category NULL), or
-- every row when $all is true. Only rows whose family or category changes
-- are written, so the affected-row count is the number of names whose
-- classification changed. The rules are applied by the kernel_family macro,
-- the same one ad hoc SQL uses, so there is exactly one classifier.
--
-- Parameters: $all BOOLEAN.
-- The category is asked once per name (family_category in SET and WHERE
-- was planned as two correlated subqueries: about 0.6 ms of the 4.6 a
-- trace's new names took).
UPDATE kernel_names AS k
SET family = c.family, category = c.category
FROM (
    SELECT name_id, family, family_category(family) AS category
    FROM (SELECT name_id, kernel_family(coalesce(demangled, name)) AS family
          FROM kernel_names
          WHERE $all OR family IS NULL OR category IS NULL)
) AS c
WHERE k.name_id = c.name_id
  AND (k.family IS DISTINCT FROM c.family
       OR k.category IS DISTINCT FROM c.category)
